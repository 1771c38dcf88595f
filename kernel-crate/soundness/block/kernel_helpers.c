#include "/work/wt-block/kernel-crate/helpers/helpers.c"
