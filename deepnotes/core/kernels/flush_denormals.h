// Denormal floats (below 1.2e-38 in float32) count as 0 while an object of this type lives, on this
// thread only (x86: the FTZ and DAZ bits of MXCSR, restored on exit; elsewhere nothing changes).
// An operation on a denormal costs about a hundred times a normal one on x86.
#pragma once
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
struct FlushDenormals {
  unsigned int saved = _mm_getcsr();
  FlushDenormals() { _mm_setcsr(saved | 0x8040u); }   // FTZ (bit 15) | DAZ (bit 6)
  ~FlushDenormals() { _mm_setcsr(saved); }
};
#else
struct FlushDenormals {};
#endif
