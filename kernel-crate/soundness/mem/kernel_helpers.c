#include "/work/wt-mem/kernel-crate/helpers/helpers.c"
