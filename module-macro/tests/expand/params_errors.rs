// module! {
//     type: Greeter,
//     name: "greeter",
//     license: "GPL",
//     params: {
//         count: u8 { default: 300, permissions: 0o644, description: "Greetings" },
//         ratio: f32 { default: 1, permissions: 0o444, description: "Ratio" },
//         secret: bool { default: false, permissions: 0o666, description: "Secret" },
//         list: ArrayParam<i32, 2> { default: [1, 2, 3], permissions: 0o444, description: "List" },
//         name: StrParam<4> { default: "hello", permissions: 0o444 },
//     },
// }

::core::compile_error! {
    "default 300 does not fit in `u8`, whose values are 0..=255"
}

::core::compile_error! {
    "unknown parameter type `f32`, expected one of: bool, i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, str, StrParam<N>, ArrayParam<T, N>"
}

::core::compile_error! {
    "permissions 0o666 make parameter `secret` world-writable; allow writes to the owner and group only, such as 0o644 or 0o664"
}

::core::compile_error! {
    "too many elements in the default: 3 given, the array holds at most 2"
}

::core::compile_error! {
    "the default string is 5 bytes long, the parameter holds at most 4"
}

::core::compile_error! {
    "missing `description` in parameter `name`, e.g. `description: \"...\"`"
}

const __LOG_PREFIX: &[u8] = b"module\0";

static THIS_MODULE: ::kernel::ThisModule = ::kernel::ThisModule::THIS;
