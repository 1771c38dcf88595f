// module! {
//     type: RustParams,
//     name: b"rust_params",
//     license: b"GPL",
//     params: {
//         my_i32: i32 {
//             default: 42,
//             permissions: 0o000,
//             description: b"Example of i32",
//         },
//         writeable_i32: i32 {
//             default: 42,
//             permissions: 0o644,
//             description: b"Example of i32",
//         },
//         my_str: str {
//             default: b"hello",
//             permissions: 0o444,
//             description: b"Example of a string",
//         },
//         my_array: ArrayParam<i32, 3> {
//             default: [0, -1],
//             permissions: 0o444,
//             description: b"Example of array",
//         },
//     },
// }

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_LICENSE: [u8; 12] = *b"license=GPL\0";

/// The module name, used by the `pr_*!` macros as the log prefix.
const __LOG_PREFIX: &[u8] = b"rust_params\0";

/// This module, as the kernel knows it.
static THIS_MODULE: ::kernel::ThisModule = ::kernel::ThisModule::THIS;

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_PARMTYPE_my_i32: [u8; 20] = *b"parmtype=my_i32:int\0";

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_PARM_my_i32: [u8; 27] = *b"parm=my_i32:Example of i32\0";

/// Example of i32
#[allow(non_upper_case_globals)]
static my_i32: ::kernel::module_param::ReadOnlyParam<i32> = ::kernel::module_param::ReadOnlyParam::new(
    42,
);

static __PARAM_OPS_my_i32: ::kernel::module_param::ParamOps<i32> = ::kernel::module_param::ParamOps::new();

#[unsafe(link_section = "__param")]
#[used]
static __PARAM_my_i32: ::kernel::module_param::KernelParam = ::kernel::module_param::KernelParam::read_only(
    c"my_i32",
    &THIS_MODULE,
    0o000,
    &__PARAM_OPS_my_i32,
    &my_i32,
);

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_PARMTYPE_writeable_i32: [u8; 27] = *b"parmtype=writeable_i32:int\0";

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_PARM_writeable_i32: [u8; 34] = *b"parm=writeable_i32:Example of i32\0";

/// Example of i32
#[allow(non_upper_case_globals)]
static writeable_i32: ::kernel::module_param::WritableParam<i32> = ::kernel::module_param::WritableParam::new(
    42,
);

static __PARAM_OPS_writeable_i32: ::kernel::module_param::ParamOps<i32> = ::kernel::module_param::ParamOps::new();

#[unsafe(link_section = "__param")]
#[used]
static __PARAM_writeable_i32: ::kernel::module_param::KernelParam = ::kernel::module_param::KernelParam::writable(
    c"writeable_i32",
    &THIS_MODULE,
    0o644,
    &__PARAM_OPS_writeable_i32,
    &writeable_i32,
);

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_PARMTYPE_my_str: [u8; 23] = *b"parmtype=my_str:string\0";

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_PARM_my_str: [u8; 32] = *b"parm=my_str:Example of a string\0";

/// Example of a string
#[allow(non_upper_case_globals)]
static my_str: ::kernel::module_param::ReadOnlyParam<
    ::kernel::module_param::StrParam<1024>,
> = ::kernel::module_param::ReadOnlyParam::new(
    <::kernel::module_param::StrParam<1024>>::new("hello"),
);

static __PARAM_OPS_my_str: ::kernel::module_param::ParamOps<
    ::kernel::module_param::StrParam<1024>,
> = ::kernel::module_param::ParamOps::new();

#[unsafe(link_section = "__param")]
#[used]
static __PARAM_my_str: ::kernel::module_param::KernelParam = ::kernel::module_param::KernelParam::read_only(
    c"my_str",
    &THIS_MODULE,
    0o444,
    &__PARAM_OPS_my_str,
    &my_str,
);

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_PARMTYPE_my_array: [u8; 31] = *b"parmtype=my_array:array of int\0";

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_PARM_my_array: [u8; 31] = *b"parm=my_array:Example of array\0";

/// Example of array
#[allow(non_upper_case_globals)]
static my_array: ::kernel::module_param::ReadOnlyParam<
    ::kernel::module_param::ArrayParam<i32, 3>,
> = ::kernel::module_param::ReadOnlyParam::new(
    <::kernel::module_param::ArrayParam<i32, 3>>::new(&[0, -1]),
);

static __PARAM_OPS_my_array: ::kernel::module_param::ParamOps<
    ::kernel::module_param::ArrayParam<i32, 3>,
> = ::kernel::module_param::ParamOps::new();

#[unsafe(link_section = "__param")]
#[used]
static __PARAM_my_array: ::kernel::module_param::KernelParam = ::kernel::module_param::KernelParam::read_only(
    c"my_array",
    &THIS_MODULE,
    0o444,
    &__PARAM_OPS_my_array,
    &my_array,
);

static __MODULE: ::kernel::module::ModuleSlot<RustParams> = ::kernel::module::ModuleSlot::new();

/// The entry points the kernel calls. They are private to this
/// module so that safe code in the crate cannot call them (calling
/// `cleanup_module` twice would drop the module value twice); the
/// symbols are exported all the same, by `no_mangle`.
mod __module_entry {
    /// Called by the kernel when the module is loaded.
    #[unsafe(no_mangle)]
    extern "C" fn init_module() -> ::core::ffi::c_int {
        unsafe { super::__MODULE.init(&super::THIS_MODULE) }
    }
    /// Called by the kernel when the module is unloaded.
    #[unsafe(no_mangle)]
    extern "C" fn cleanup_module() {
        unsafe { super::__MODULE.exit() }
    }
}
