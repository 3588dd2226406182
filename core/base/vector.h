/*
 * vector — VECTOR_CLONES, the attribute of jackdaw's few hot loops written for the
 * compiler to vectorize: the victims' draw and its ranks (core/policy/steal.c), the
 * simulator's marks (core/sim/sim_thief.c) and synthetic object bytes
 * (core/runtime/objstore.c).  The build targets the x86-64 baseline, so each such
 * function gets clones for AVX-512 and AVX2 besides, the CPU's picked at load time (an
 * ifunc).  Owns nothing.
 *
 * Not under ThreadSanitizer, whose runtime is not up yet when the loader runs the
 * resolvers: the binary crashed before main.  The same C is then compiled once.
 */
#ifndef JACKDAW_VECTOR_H
#define JACKDAW_VECTOR_H

#if defined(__SANITIZE_THREAD__)
#define VECTOR_CLONES
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VECTOR_CLONES
#endif
#endif
#ifndef VECTOR_CLONES
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

#endif
