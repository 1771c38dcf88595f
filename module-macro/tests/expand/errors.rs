// module! {
//     type: Hello,
//     name: "hello-world",
//     autor: "Ada",
// }

::core::compile_error! {
    "invalid module name `hello-world`: '-' is not allowed; a module name has only ASCII letters, digits and `_`"
}

::core::compile_error! {
    "unknown field `autor`, expected one of: type, name, author, description, license, alias, params"
}

::core::compile_error! {
    "missing required field `license`, e.g. `license: \"GPL\"`"
}

const __LOG_PREFIX: &[u8] = b"module\0";

static THIS_MODULE: ::kernel::ThisModule = ::kernel::ThisModule::THIS;
