// The vector registers of the instruction set this file is compiled for, read from the compiler's own
// macros (set by -march=…; deepnotes/core/kernels/__init__.py picks the target):
//     AVX-512            64-byte vectors, 32 registers
//     AVX, AVX2          32-byte vectors, 16 registers
//     ARM (AArch64 NEON) 16-byte vectors, 32 registers
//     SSE and the rest   16-byte vectors, 16 registers
// and the shape of the matrix-product tile that fits them (blocks.cpp's `tile`): TILE_ROWS rows of A
// times TILE_VECTORS vectors of B's columns keep TILE_ROWS·TILE_VECTORS accumulators in registers, and
// each step of the product also holds the TILE_VECTORS vectors of B it loads and one broadcast element
// of A. So TILE_ROWS·TILE_VECTORS + TILE_VECTORS + 1 ≤ VECTOR_REGISTERS: 6 × 4 on AVX-512 (29 of 32),
// 6 × 2 on AVX2 (15 of 16), 6 × 2 on SSE, 6 × 4 on NEON. Six rows load each vector of B for more
// products than four (measured: 5–12 % a layer of the 1000-layer chapter's blocks, AVX2 and AVX-512;
// benchmarks/RESULTS.md). A tile written for 64-byte vectors compiled for AVX2 splits into twice the
// registers the machine has, and every product spills its accumulators to memory.
#pragma once

#if defined(__AVX512F__)
constexpr int VECTOR_BYTES = 64, VECTOR_REGISTERS = 32;
#elif defined(__AVX__)
constexpr int VECTOR_BYTES = 32, VECTOR_REGISTERS = 16;
#elif defined(__aarch64__) || defined(__ARM_NEON)
constexpr int VECTOR_BYTES = 16, VECTOR_REGISTERS = 32;
#else
constexpr int VECTOR_BYTES = 16, VECTOR_REGISTERS = 16;
#endif

constexpr int TILE_ROWS = 6;
// the most vectors per tile row that leave registers for the loads (at most 4: the chapters' widths
// are 1–6 vectors, and a wider tile has no work at them), minus a register of headroom where the
// count would use every register (the compiler needs one for addresses of the broadcast)
constexpr int tile_vectors() {
  int n = 1;
  while (n < 4 && TILE_ROWS * (n + 1) + (n + 1) + 1 < VECTOR_REGISTERS) n++;
  return n;
}
constexpr int TILE_VECTORS = tile_vectors();
// the narrowest tile column, 32 bytes (8 floats: half an AVX-512 vector, a whole AVX2 one) or a whole
// 16-byte vector: blocks.cpp pads a product's width to a multiple of it (a 7-token attention row is
// one column of 8)
constexpr int NARROW_BYTES = VECTOR_BYTES >= 32 ? 32 : VECTOR_BYTES;
