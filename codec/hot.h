/* WZ_HOT: the attribute of the codec's inner loops.  The library builds at
 * the project's -O2; GCC takes -O3 (vectorisation of the loops over
 * components) for the functions that carry it.  Other compilers build them
 * as the rest. */
#ifndef WZ_CODEC_HOT_H
#define WZ_CODEC_HOT_H

#if defined(__GNUC__) && !defined(__clang__)
#define WZ_HOT __attribute__((optimize("O3")))
#else
#define WZ_HOT
#endif

/* WZ_VEC_CLONES: also AVX2 and AVX-512 clones, chosen at run time, for
 * loops that are the same operations in the same order on any vector width
 * (no reductions reordered, and ISO C mode contracts nothing into fused
 * multiply-adds), so their results do not depend on the machine. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define WZ_VEC_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define WZ_VEC_CLONES
#endif

#endif
