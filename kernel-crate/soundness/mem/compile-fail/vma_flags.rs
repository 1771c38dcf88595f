// Setting a flag that the memory manager owns on a driver's mapping:
// `VM_HUGETLB` (0x0040_0000 in 6.1) makes the next fault or unmap of the
// area a `kernel BUG at mm/hugetlb.c`. Only the typed setters are public
// (`set_dontcopy`, `set_mixedmap`, `try_clear_maywrite`, ...).
use kernel::mm::Vma;

fn make_huge(vma: &mut Vma) {
    vma.update_flags(0x0040_0000, 0);
}
