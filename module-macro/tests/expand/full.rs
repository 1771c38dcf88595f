// module! {
//     type: crate::Hello,
//     name: "hello",
//     author: ["Ada Lovelace", "Grace Hopper"],
//     description: "Says hello",
//     license: "GPL",
//     alias: ["hi", "hey"],
// }

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_AUTHOR_0: [u8; 20] = *b"author=Ada Lovelace\0";

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_AUTHOR_1: [u8; 20] = *b"author=Grace Hopper\0";

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_DESCRIPTION: [u8; 23] = *b"description=Says hello\0";

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_LICENSE: [u8; 12] = *b"license=GPL\0";

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_ALIAS_0: [u8; 9] = *b"alias=hi\0";

#[unsafe(link_section = ".modinfo")]
#[used]
static __MODINFO_ALIAS_1: [u8; 10] = *b"alias=hey\0";

/// The module name, used by the `pr_*!` macros as the log prefix.
const __LOG_PREFIX: &[u8] = b"hello\0";

/// This module, as the kernel knows it.
static THIS_MODULE: ::kernel::ThisModule = ::kernel::ThisModule::THIS;

static __MODULE: ::kernel::module::ModuleSlot<crate::Hello> = ::kernel::module::ModuleSlot::new();

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
