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

#endif
