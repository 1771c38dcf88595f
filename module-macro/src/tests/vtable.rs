//! `#[vtable]` on a trait and on an implementation, and its errors.

use expect_test::{expect, Expect};
use proc_macro2::TokenStream;

use crate::vtable::vtable;

fn check(attr: &str, item: &str, expect: Expect) {
    let attr: TokenStream = attr.parse().expect("attr");
    let item: TokenStream = item.parse().expect("item");
    let out = vtable(attr, item);
    let text = match syn::parse2::<syn::File>(out.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => out.to_string(),
    };
    expect.assert_eq(&text);
}

#[test]
fn on_a_trait_every_method_gets_a_false_constant() {
    check(
        "",
        "pub trait Ops { type Data; fn open() -> Self; fn seek(&self) -> u64 { 0 } }",
        expect![[r##"
            pub trait Ops {
                type Data;
                fn open() -> Self;
                fn seek(&self) -> u64 {
                    0
                }
                ///Whether the implementation defines `open` (set by `#[vtable]`).
                const HAS_OPEN: bool = false;
                ///Whether the implementation defines `seek` (set by `#[vtable]`).
                const HAS_SEEK: bool = false;
                /// Proves that the implementation carries `#[vtable]` too.
                #[doc(hidden)]
                const USE_VTABLE_ATTR: ();
            }
        "##]],
    );
}

#[test]
fn on_an_impl_only_defined_methods_are_true() {
    check(
        "",
        "impl Ops for X { type Data = (); fn open() -> Self { X } const HAS_SEEK: bool = false; fn seek(&self) -> u64 { 1 } }",
        expect![[r##"
            impl Ops for X {
                type Data = ();
                fn open() -> Self {
                    X
                }
                const HAS_SEEK: bool = false;
                fn seek(&self) -> u64 {
                    1
                }
                const HAS_OPEN: bool = true;
                const USE_VTABLE_ATTR: () = ();
            }
        "##]],
    );
}

#[test]
fn errors() {
    check(
        "x",
        "impl Ops for X {}",
        expect![[r##"
            ::core::compile_error! {
                "#[vtable] takes no arguments"
            }
            impl Ops for X {
                const USE_VTABLE_ATTR: () = ();
            }
        "##]],
    );
    check(
        "",
        "struct S;",
        expect![[r##"
            ::core::compile_error! {
                "#[vtable] goes on a trait or on an implementation of one"
            }
            struct S;
        "##]],
    );
    check(
        "",
        "impl X { fn f() {} }",
        expect![[r##"
            ::core::compile_error! {
                "#[vtable] goes on a trait or on an implementation of one"
            }
            impl X {
                fn f() {}
            }
        "##]],
    );
}
