// The N blocks of an engine Stack, forward and backward, as plain loops: one call runs every
// layer of every member (deepnotes/core/kernels/__init__.py compiles this file for a target;
// deepnotes/core/blocks.py calls it through ctypes).
//
// The formulas are deepnotes/core/blocks.py's, member by member (its docstring writes them out); there, each small operation of a layer is one PyTorch call that costs a few microseconds to
// dispatch whatever its size. Here a member's whole layer is computed in one pass over data that
// stays in the core's cache, with a register-blocked matrix product, and the members are spread over
// threads (each member's arithmetic runs on one thread in a fixed order: the same result for any
// thread count). The forward keeps every layer's intermediates for the backward (Member::bind, tens
// of KB per member and layer) or, where the caller has no room for them (Layout::kept = 0), only each
// layer's input, from which the backward recomputes the layer. Adam can step each layer inside the
// backward (AdamInBackward), while its gradient is still in cache. Denormal numbers
// count as 0 here (FlushDenormals): the gradients that vanish through a deep Post-LN stack otherwise
// pass through the 1e-38 range, where each float operation costs about a hundred times more.
//
// Layout (row-major, contiguous): block parameters [N, K, r, c] (matrices stored [in, out]), the
// stream x [K, M = B·T, d]. One block on member k:
//     u = LN(x) if pre_k else x;  f = F(u);  s = α_k·x + g·f (g the gate if gated_k, else 1);
//     y = LN(s) if post_k else s.
// Plain C++17 with GCC/Clang vector extensions: no PyTorch headers, so it compiles in about a second,
// for any target; vector widths and tile shapes come from target.h, GELU's polynomials from gelu_fit.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>
#include "adam_update.h"
#include "flush_denormals.h"
#include "gelu_fit.h"
#include "target.h"

namespace {

// slots of the parameter pointer array, as deepnotes/core/blocks.py passes them (null where a stack lacks the piece)
enum Slot {
  ATTN_NORM_W, ATTN_NORM_B, ATTN_GATE, QKV_W, QKV_B, OUT_W, OUT_B,
  FFN_NORM_W, FFN_NORM_B, FFN_GATE, FC1_W, FC1_B, FC2_W, FC2_B, N_SLOTS
};

struct Layout {
  int64_t n_layers, members, tokens, d, d_ff, seq, heads;
  int64_t attention, causal, gelu, threads;
  int64_t kept;                          // entries per member and layer of `saved` (0: the layers' inputs)
  double eps;
};

template <typename T, int BYTES> struct Vec { typedef T type __attribute__((vector_size(BYTES))); };

// The lines of memory the next layer reads or writes, asked for (into L2) a few at a time while this
// layer computes: at a thousand layers they come from memory, not cache (measured: 31 µs a layer of the
// 1000-layer chapter's blocks when they fit in cache, 49 µs when they do not). Asked for all at once at
// the start of a layer, the requests fill the core's queue of misses and stall it until they arrive,
// which costs as much as it saves; dripped out between the layer's matrix products (drip, called by
// mm_strided, the Adam steps and each sublayer's backward), they arrive while it computes. Gradients and the stored intermediates are asked for to be
// written: a store to a line that is not in cache waits for the line to be read first.
constexpr int64_t PREFETCH_BYTES = 256 << 10;     // a quarter of a 1 MB L2, the smallest of the x86 cores in use
struct PrefetchQueue {
  struct Span {
    const char* p;
    int64_t bytes;
    bool write;
  };
  std::vector<Span> spans;
  size_t at = 0;
  int64_t offset = 0;

  int64_t queued = 0;

  // at most PREFETCH_BYTES a layer: more would not stay in L2 until the next layer reads it (BERT's
  // 1024-token layers keep 4 MB of intermediates; prefetched whole, they took a layer from 6.3 to 11 ms)
  void add(const void* p, int64_t bytes, bool write) {
    bytes = std::min(bytes, PREFETCH_BYTES - queued);
    if (p && bytes > 0) {
      spans.push_back({static_cast<const char*>(p), bytes, write});
      queued += bytes;
    }
  }
  // ask for up to `lines` more cache lines (64 bytes)
  void issue(int64_t lines) {
    for (; lines > 0 && at < spans.size(); lines--) {
      const Span& s = spans[at];
      if (s.write) __builtin_prefetch(s.p + offset, 1, 2);
      else __builtin_prefetch(s.p + offset, 0, 2);
      offset += 64;
      if (offset >= s.bytes) {
        at++;
        offset = 0;
      }
    }
  }
  // ask for whatever is left (the layer that needs it starts) and start over
  void restart() {
    issue(INT64_MAX);
    spans.clear();
    at = 0;
    offset = 0;
    queued = 0;
  }
};
thread_local PrefetchQueue next_layer;
constexpr int64_t DRIP_LINES = 96;                // per call of drip (best of 24–192 on the 1000-layer chapter's blocks)

inline void drip() { next_layer.issue(DRIP_LINES); }

// C[r, :] = Σ_p A[r, p]·B[p, :] (+ bias) for R rows and NV vectors of BYTES: the products
// accumulate in registers (R·NV vectors), each B vector loaded once for R rows. A[r, p] sits at
// A[r·ars + p·acs], so Aᵀ needs no copy. Sized by target.h so that the R·NV accumulators, the NV
// loads and the broadcast fit in the target's vector registers.
template <typename T, int BYTES, int R, int NV>
inline void tile(int64_t K, const T* A, int64_t ars, int64_t acs, const T* B, int64_t ldb, T* C, int64_t ldc,
                 const T* bias) {
  typedef typename Vec<T, BYTES>::type V;
  constexpr int L = BYTES / sizeof(T);
  V acc[R][NV];
  for (int r = 0; r < R; r++)
    for (int v = 0; v < NV; v++) {
      if (bias) std::memcpy(&acc[r][v], bias + v * L, BYTES);
      else acc[r][v] = V{};
    }
  for (int64_t p = 0; p < K; p++) {
    V b[NV];
    for (int v = 0; v < NV; v++) std::memcpy(&b[v], B + p * ldb + v * L, BYTES);
    for (int r = 0; r < R; r++) {
      T a = A[r * ars + p * acs];
      for (int v = 0; v < NV; v++) acc[r][v] += a * b[v];
    }
  }
  for (int r = 0; r < R; r++)
    for (int v = 0; v < NV; v++) std::memcpy(C + r * ldc + v * L, &acc[r][v], BYTES);
}

// the last n < TILE_VECTORS whole vectors of a row block: one tile of n vectors
template <typename T, int R, int NV = TILE_VECTORS - 1>
inline void tail_vectors(int n, int64_t K, const T* A, int64_t ars, int64_t acs, const T* B, int64_t ldb, T* C,
                         int64_t ldc, const T* bias) {
  if constexpr (NV > 0) {
    if (n == NV) tile<T, VECTOR_BYTES, R, NV>(K, A, ars, acs, B, ldb, C, ldc, bias);
    else tail_vectors<T, R, NV - 1>(n, K, A, ars, acs, B, ldb, C, ldc, bias);
  }
}

// C[r, j] for R rows and the columns j < N, N a multiple of NARROW_BYTES: tiles of TILE_VECTORS
// vectors, then one of the vectors left, then a narrow one (half an AVX-512 vector)
template <typename T, int R>
inline void row_block(int64_t K, int64_t N, const T* A, int64_t ars, int64_t acs, const T* B, int64_t ldb, T* C,
                      int64_t ldc, const T* bias) {
  constexpr int L = VECTOR_BYTES / sizeof(T);
  auto at = [&](int64_t j) { return bias ? bias + j : nullptr; };
  int64_t j = 0;
  for (; j + TILE_VECTORS * L <= N; j += TILE_VECTORS * L)
    tile<T, VECTOR_BYTES, R, TILE_VECTORS>(K, A, ars, acs, B + j, ldb, C + j, ldc, at(j));
  int left = int((N - j) / L);
  tail_vectors<T, R>(left, K, A, ars, acs, B + j, ldb, C + j, ldc, at(j));
  j += left * L;
  if constexpr (NARROW_BYTES < VECTOR_BYTES)
    if (j < N) tile<T, NARROW_BYTES, R, 1>(K, A, ars, acs, B + j, ldb, C + j, ldc, at(j));
}

// row_block over every row of A: blocks of TILE_ROWS rows, then the rows left
template <typename T, int R = TILE_ROWS>
void row_blocks(int64_t M, int64_t K, int64_t N, const T* A, int64_t ars, int64_t acs, const T* B, int64_t ldb,
                T* C, int64_t ldc, const T* bias) {
  int64_t i = 0;
  for (; i + R <= M; i += R) row_block<T, R>(K, N, A + i * ars, ars, acs, B, ldb, C + i * ldc, ldc, bias);
  if constexpr (R > 1)
    if (i < M) row_blocks<T, R - 1>(M - i, K, N, A + i * ars, ars, acs, B, ldb, C + i * ldc, ldc, bias);
}

// C [M, N] = A · B (+ bias [N] broadcast over rows); A [M, K] with A[i, p]
// at A[i·ars + p·acs], B [K, N] with row stride ldb, C with row stride ldc. The last N mod H columns
// (H: NARROW_BYTES of T, 8 floats on AVX2 and AVX-512) go through a zero-padded copy of those columns
// of B, so that every product runs on vectors (a causal stack's attention at 7-token rows: products of
// 7 × 7 and 7 × 16).
template <typename T>
void mm_strided(int64_t M, int64_t K, int64_t N, const T* A, int64_t ars, int64_t acs, const T* B, int64_t ldb,
                T* C, int64_t ldc, const T* bias) {
  constexpr int H = NARROW_BYTES / sizeof(T);
  int64_t wide = N - N % H, w = N - wide;
  drip();
  row_blocks(M, K, wide, A, ars, acs, B, ldb, C, ldc, bias);
  if (w == 0) return;
  thread_local std::vector<T> pad;
  pad.assign(K * H + H + M * H, T(0));                 // B's last columns [K, H], the bias's [H], C's [M, H]
  T *bp = pad.data(), *biasp = bp + K * H, *cp = biasp + H;
  for (int64_t p = 0; p < K; p++)
    for (int64_t c = 0; c < w; c++) bp[p * H + c] = B[p * ldb + wide + c];
  if (bias)
    for (int64_t c = 0; c < w; c++) biasp[c] = bias[wide + c];
  row_blocks(M, K, int64_t(H), A, ars, acs, bp, int64_t(H), cp, int64_t(H), bias ? biasp : nullptr);
  for (int64_t i = 0; i < M; i++)
    for (int64_t c = 0; c < w; c++) C[i * ldc + wide + c] = cp[i * H + c];
}

// C [M, N] = A [M, K] · B [K, N] (+ bias); lda, ldb, ldc the row strides
template <typename T>
void mm(int64_t M, int64_t K, int64_t N, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
        const T* bias = nullptr) {
  mm_strided(M, K, N, A, lda, int64_t(1), B, ldb, C, ldc, bias);
}

// C [M, N] = Aᵀ · B where A is [K, M] (row stride lda), B [K, N]
template <typename T>
void mm_tn(int64_t M, int64_t K, int64_t N, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc) {
  mm_strided(M, K, N, A, int64_t(1), lda, B, ldb, C, ldc, (const T*)nullptr);
}

// Two 8-float vectors shuffled into one by eight constant indices (0–7: a's, 8–15: b's); GCC and Clang
// spell it differently
#if defined(__clang__)
#define SHUFFLE8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SHUFFLE8(a, b, ...) __builtin_shuffle(a, b, (int __attribute__((vector_size(32)))){__VA_ARGS__})
#endif

// The 8 × 8 floats at src (row stride lds) transposed into dst (row stride ldd), in three rounds of
// two-vector shuffles
inline void transpose8(const float* src, int64_t lds, float* dst, int64_t ldd) {
  typedef float V __attribute__((vector_size(32)));
  V r[8], t[8], u[8];
  for (int k = 0; k < 8; k++) std::memcpy(&r[k], src + k * lds, sizeof(V));
  for (int k = 0; k < 8; k += 2) {                                       // pairs of rows interleaved
    t[k] = SHUFFLE8(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[k + 1] = SHUFFLE8(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int k = 0; k < 8; k += 4) {                                       // quadruples
    u[k] = SHUFFLE8(t[k], t[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    u[k + 1] = SHUFFLE8(t[k], t[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    u[k + 2] = SHUFFLE8(t[k + 1], t[k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
    u[k + 3] = SHUFFLE8(t[k + 1], t[k + 3], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  for (int k = 0; k < 4; k++) {                                          // columns k and k + 4
    V a = SHUFFLE8(u[k], u[k + 4], 0, 1, 2, 3, 8, 9, 10, 11), b = SHUFFLE8(u[k], u[k + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    std::memcpy(dst + k * ldd, &a, sizeof(V));
    std::memcpy(dst + (k + 4) * ldd, &b, sizeof(V));
  }
}

// dst [c, r] = src [r, c]ᵀ (src row stride lds); float in 8 × 8 blocks of vector shuffles
template <typename T>
void transpose(int64_t r, int64_t c, const T* src, int64_t lds, T* dst) {
  int64_t r8 = 0, c8 = 0;
  if constexpr (std::is_same_v<T, float>) {
    r8 = r - r % 8;
    c8 = c - c % 8;
    for (int64_t i = 0; i < r8; i += 8)
      for (int64_t j = 0; j < c8; j += 8) transpose8(src + i * lds + j, lds, dst + j * r + i, r);
  }
  for (int64_t i = 0; i < r; i++)                                        // what the blocks left
    for (int64_t j = (i < r8 ? c8 : 0); j < c; j++) dst[j * r + i] = src[i * lds + j];
}

// C [M, N] = A [M, K] · Bᵀ where B is [N, K] (row stride ldb); scratch holds K·N
template <typename T>
void mm_nt(int64_t M, int64_t K, int64_t N, const T* A, int64_t lda, const T* B, int64_t ldb, T* C,
           int64_t ldc, T* scratch) {
  transpose(N, K, B, ldb, scratch);
  mm(M, K, N, A, lda, scratch, N, C, ldc);
}

// g [N] = Σ_rows a [rows, N]
template <typename T>
void column_sums(int64_t rows, int64_t n, const T* a, T* g) {
  for (int64_t j = 0; j < n; j++) g[j] = 0;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < n; j++) g[j] += a[i * n + j];
}

// LayerNorm over rows of x [M, d]: x̂ = (x − mean)·rstd, y = x̂ γ + β (rstd = 1/√(var + ε), var biased)
template <typename T>
void norm_forward(int64_t M, int64_t d, const T* x, const T* w, const T* b, double eps, T* xhat,
                  T* rstd, T* y) {
  for (int64_t i = 0; i < M; i++) {
    const T* xi = x + i * d;
    T mean = 0, var = 0;
    for (int64_t j = 0; j < d; j++) mean += xi[j];
    mean /= T(d);
    for (int64_t j = 0; j < d; j++) var += (xi[j] - mean) * (xi[j] - mean);
    var /= T(d);
    T r = T(1) / std::sqrt(var + T(eps));
    rstd[i] = r;
    for (int64_t j = 0; j < d; j++) {
      T h = (xi[j] - mean) * r;
      xhat[i * d + j] = h;
      y[i * d + j] = h * w[j] + b[j];
    }
  }
}

// LN backward: ∂γ += Σ dy x̂, ∂β += Σ dy; dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂ ⊙ x̂)), dx̂ = dy ⊙ γ
template <typename T>
void norm_backward(int64_t M, int64_t d, const T* dy, const T* xhat, const T* rstd, const T* w,
                   T* gw, T* gb, T* dx) {
  for (int64_t i = 0; i < M; i++) {
    const T* dyi = dy + i * d;
    const T* hi = xhat + i * d;
    T m1 = 0, m2 = 0;
    for (int64_t j = 0; j < d; j++) {
      gw[j] += dyi[j] * hi[j];
      gb[j] += dyi[j];
      T g = dyi[j] * w[j];
      m1 += g;
      m2 += g * hi[j];
    }
    m1 /= T(d);
    m2 /= T(d);
    for (int64_t j = 0; j < d; j++) {
      dx[i * d + j] = rstd[i] * (dyi[j] * w[j] - m1 - hi[j] * m2);
    }
  }
}

// GELU(h) = h·Φ(h) and GELU'(h) = Φ(h) + h·φ(h), Φ the standard normal's distribution function and φ
// its density. float32 on vectors: polynomials fitted by tools/fit_gelu.py (gelu_fit.h; the script's
// docstring derives the pieces), every step a multiply, add, min/max, conversion or select, so that the
// loops over a layer's activations vectorize; with a = |h|/√2 and a₀ = ERFC_SPLIT,
//     erfc(a) = 1 − a·P(a²) (a < a₀),  e^(−a²)·Q(1/a)/a (a₀ ≤ a ≤ 6);  Φ(h) = erfc(a)/2 (h < 0), 1 − erfc(a)/2,
//     φ(h) = e^(−a²)/√(2π),  e^y = 2^n·E(y·log₂e − n), n = round(y·log₂e).
// float64 (the tests' precision) calls the C library's erf and exp. Always inlined: a call in the loop
// keeps it from vectorizing (measured: GELU then took a third of a 1024-token layer's time).
#define ALWAYS_INLINE inline __attribute__((always_inline))
template <int N> ALWAYS_INLINE float polynomial(const float (&c)[N], float centre, float scale, float x) {
  float u = (x - centre) * scale, y = c[0];
  for (int i = 1; i < N; i++) y = y * u + c[i];
  return y;
}

// e^y for −37 ≤ y ≤ 0
ALWAYS_INLINE float exp_nonpositive(float y) {
  float k = y * 1.44269504088896341f;                                     // y·log₂e ≤ 0
  int32_t n = -int32_t(0.5f - k);                                         // round(k): truncation of 0.5 − k ≥ 0
  int32_t bits = (n + 127) << 23;                                         // 2^n as a float's bits
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return polynomial(EXP2, EXP2_CENTRE, EXP2_SCALE, k - float(n)) * scale;
}

// Φ(h) and e^(−h²/2)
ALWAYS_INLINE float normal_cdf(float h, float& gauss) {
  float a = std::min(std::fabs(h) * 0.707106781186547524f, ERFC_LARGEST), s = a * a;
  gauss = exp_nonpositive(-s);
  float t = 1.0f / std::max(a, ERFC_SPLIT);
  float erfc = a < ERFC_SPLIT ? 1.0f - a * polynomial(ERF_SMALL, ERF_SMALL_CENTRE, ERF_SMALL_SCALE, s)
                              : gauss * t * polynomial(ERFC_LARGE, ERFC_LARGE_CENTRE, ERFC_LARGE_SCALE, t);
  return h < 0.0f ? 0.5f * erfc : 1.0f - 0.5f * erfc;
}

template <typename T> ALWAYS_INLINE T gelu(T h) {
  if constexpr (std::is_same_v<T, float>) {
    float gauss;
    return h * normal_cdf(h, gauss);
  } else {
    return T(0.5) * h * (T(1) + std::erf(h * T(M_SQRT1_2)));
  }
}
template <typename T> ALWAYS_INLINE T gelu_grad(T h) {
  if constexpr (std::is_same_v<T, float>) {
    float gauss, cdf = normal_cdf(h, gauss);
    return cdf + h * gauss * 0.398942280401432678f;                      // φ(h) = e^(−h²/2)/√(2π)
  } else {
    return T(0.5) * (T(1) + std::erf(h * T(M_SQRT1_2))) + h * std::exp(T(-0.5) * h * h) * T(0.5 * M_2_SQRTPI * M_SQRT1_2);
  }
}

// One member's parameters of one layer (pointers into [N, K, r, c])
template <typename T>
struct LayerParams {
  const T* p[N_SLOTS];
  T* g[N_SLOTS];
};

// A sublayer's intermediates: pointers into the member's own buffers, or, for what the backward
// reads, into a layer's region of the caller's `saved` (Member::bind)
template <typename T>
struct SublayerState {
  T *x, *u, *pre_xhat, *pre_rstd, *f, *s, *post_xhat, *post_rstd;
  T *qkv, *probs, *y;                      // attention
  T *h, *a;                                // FFN
};

template <typename T>
struct Member {
  const Layout& L;
  T alpha;
  bool pre, post, gated;
  SublayerState<T> attn, ffn;
  SublayerState<T> own_attn, own_ffn;               // the same, all in `own`
  std::vector<T> own;
  int64_t probs_n;
  std::vector<T> scratch, buf1, buf2, buf3;         // transposes; the branches' backward; the mid-block stream
  std::vector<T> ds_buf, df_buf, du_buf, skip_buf;  // a sublayer's backward [M, d]

  Member(const Layout& lay, T al, bool pr, bool po, bool ga) : L(lay), alpha(al), pre(pr), post(po), gated(ga) {
    int64_t M = L.tokens, d = L.d, f = L.d_ff;
    probs_n = (M / L.seq) * L.heads * L.seq * L.seq;
    own.resize(2 * (7 * M * d + 2 * M) + M * 3 * d + probs_n + 2 * M * f);
    T* next = own.data();
    auto take = [&](T*& p, int64_t n) { p = next; next += n; };
    for (SublayerState<T>* st : {&attn, &ffn}) {
      for (T** v : {&st->x, &st->u, &st->pre_xhat, &st->f, &st->s, &st->post_xhat, &st->y}) take(*v, M * d);
      take(st->pre_rstd, M);
      take(st->post_rstd, M);
      st->qkv = st->probs = st->h = st->a = nullptr;
    }
    take(attn.qkv, M * 3 * d);
    take(attn.probs, probs_n);
    take(ffn.h, M * f);
    take(ffn.a, M * f);
    own_attn = attn;
    own_ffn = ffn;
    int64_t big = std::max({3 * d * d, d * f, M * 3 * d, M * f, L.seq * d, L.seq * L.seq});
    scratch.resize(big);
    buf1.resize(std::max(M * 3 * d, M * f));
    buf2.resize(std::max(M * 3 * d, M * f));
    buf3.resize(std::max(L.seq * L.seq, M * d));
    for (auto* v : {&ds_buf, &df_buf, &du_buf, &skip_buf}) v->resize(M * d);
  }

  // the sublayer's branch F(u) into st.f
  void attention_forward(SublayerState<T>& st, const LayerParams<T>& lp) {
    int64_t M = L.tokens, d = L.d, t = L.seq, nh = L.heads, dh = d / nh, B = M / t;
    T scale = T(1) / std::sqrt(T(dh));
    mm<T>(M, d, 3 * d, st.u, d, lp.p[QKV_W], 3 * d, st.qkv, 3 * d, lp.p[QKV_B]);
    for (int64_t b = 0; b < B; b++)
      for (int64_t hd = 0; hd < nh; hd++) {
        const T* q = st.qkv + b * t * 3 * d + hd * dh;
        const T* k = q + d;
        const T* v = q + 2 * d;
        T* P = st.probs + (b * nh + hd) * t * t;                       // [T, T]
        mm_nt<T>(t, dh, t, q, 3 * d, k, 3 * d, P, t, scratch.data());
        for (int64_t i = 0; i < t; i++) {                                     // softmax of the scaled row
          int64_t n = L.causal ? i + 1 : t;
          T mx = -INFINITY;
          for (int64_t j = 0; j < n; j++) mx = std::max(mx, P[i * t + j] * scale);
          T sum = 0;
          for (int64_t j = 0; j < n; j++) sum += (P[i * t + j] = std::exp(P[i * t + j] * scale - mx));
          for (int64_t j = 0; j < n; j++) P[i * t + j] /= sum;
          for (int64_t j = n; j < t; j++) P[i * t + j] = 0;
        }
        mm<T>(t, t, dh, P, t, v, 3 * d, st.y + b * t * d + hd * dh, d);   // Y = P V
      }
    mm<T>(M, d, d, st.y, d, lp.p[OUT_W], d, st.f, d, lp.p[OUT_B]);
  }

  void ffn_forward(SublayerState<T>& st, const LayerParams<T>& lp) {
    int64_t M = L.tokens, d = L.d, f = L.d_ff;
    mm<T>(M, d, f, st.u, d, lp.p[FC1_W], f, st.h, f, lp.p[FC1_B]);
    if (L.gelu)
      for (int64_t i = 0; i < M * f; i++) st.a[i] = gelu(st.h[i]);
    else
      for (int64_t i = 0; i < M * f; i++) st.a[i] = st.h[i] > 0 ? st.h[i] : T(0);
    mm<T>(M, f, d, st.a, f, lp.p[FC2_W], d, st.f, d, lp.p[FC2_B]);
  }

  // y = [LN if post](α x + g F([LN if pre](x))) for one sublayer; x read from in, y written to out
  void sublayer_forward(SublayerState<T>& st, const LayerParams<T>& lp, bool attention, const T* in, T* out) {
    int64_t M = L.tokens, d = L.d;
    int nw = attention ? ATTN_NORM_W : FFN_NORM_W, nb = nw + 1, gs = nw + 2;
    std::memcpy(st.x, in, M * d * sizeof(T));
    if (pre) norm_forward<T>(M, d, st.x, lp.p[nw], lp.p[nb], L.eps, st.pre_xhat, st.pre_rstd, st.u);
    else std::memcpy(st.u, in, M * d * sizeof(T));
    if (attention) attention_forward(st, lp);
    else ffn_forward(st, lp);
    T g = gated ? lp.p[gs][0] : T(1);
    T* s = post ? st.s : out;
    for (int64_t i = 0; i < M * d; i++) s[i] = alpha * st.x[i] + g * st.f[i];
    if (post) norm_forward<T>(M, d, s, lp.p[nw], lp.p[nb], L.eps, st.post_xhat, st.post_rstd, out);
  }

  // every intermediate of a layer that its backward reads, in a fixed order: fn(pointer, entries),
  // the pointer by reference (bind points it elsewhere)
  template <typename F>
  void each_kept(F fn) {
    int64_t M = L.tokens, d = L.d, f = L.d_ff;
    auto sublayer = [&](SublayerState<T>& st) {
      fn(st.u, M * d);
      if (pre) { fn(st.pre_xhat, M * d); fn(st.pre_rstd, M); }
      if (post) { fn(st.post_xhat, M * d); fn(st.post_rstd, M); }
      if (gated) fn(st.f, M * d);
    };
    if (L.attention) {
      sublayer(attn);
      fn(attn.qkv, M * 3 * d);
      fn(attn.probs, probs_n);
      fn(attn.y, M * d);
    }
    sublayer(ffn);
    fn(ffn.a, M * f);
    if (L.gelu) fn(ffn.h, M * f);
  }
  int64_t kept_entries() {
    int64_t n = 0;
    each_kept([&](T*&, int64_t c) { n += c; });
    return n;
  }
  // the forward writes, and the backward reads, what the backward needs in region [kept_entries()]
  // (null: in the member's own buffers)
  void bind(T* region) {
    attn = own_attn;
    ffn = own_ffn;
    if (region) each_kept([&](T*& p, int64_t c) { p = region; region += c; });
  }

  void block_forward(const LayerParams<T>& lp, const T* in, T* out) {
    if (L.attention) {
      sublayer_forward(attn, lp, true, in, buf3.data());
      sublayer_forward(ffn, lp, false, buf3.data(), out);
    } else {
      sublayer_forward(ffn, lp, false, in, out);
    }
  }

  // ∂L/∂u of the attention branch given ∂L/∂f (df), parameter gradients written
  void attention_backward(SublayerState<T>& st, const LayerParams<T>& lp, const T* df, T* du) {
    int64_t M = L.tokens, d = L.d, t = L.seq, nh = L.heads, dh = d / nh, B = M / t;
    T scale = T(1) / std::sqrt(T(dh));
    T* dy = buf1.data();                                                     // [M, d]
    T* dqkv = buf2.data();                                                   // [M, 3d]
    mm_tn<T>(d, M, d, st.y, d, df, d, lp.g[OUT_W], d);
    column_sums<T>(M, d, df, lp.g[OUT_B]);
    mm_nt<T>(M, d, d, df, d, lp.p[OUT_W], d, dy, d, scratch.data());
    T* dp = buf3.data();                                                     // [T, T]
    for (int64_t b = 0; b < B; b++)
      for (int64_t hd = 0; hd < nh; hd++) {
        int64_t off = b * t * 3 * d + hd * dh;
        const T* q = st.qkv + off;
        const T* k = q + d;
        const T* v = q + 2 * d;
        const T* P = st.probs + (b * nh + hd) * t * t;
        const T* dyh = dy + b * t * d + hd * dh;
        mm_nt<T>(t, dh, t, dyh, d, v, 3 * d, dp, t, scratch.data());            // ∂P = ∂Y Vᵀ
        mm_tn<T>(t, t, dh, P, t, dyh, d, dqkv + off + 2 * d, 3 * d);  // ∂V = Pᵀ ∂Y
        for (int64_t i = 0; i < t; i++) {                                      // ∂S = P ⊙ (∂P − Σ ∂P ⊙ P), scaled
          T dot = 0;
          for (int64_t j = 0; j < t; j++) dot += dp[i * t + j] * P[i * t + j];
          for (int64_t j = 0; j < t; j++) dp[i * t + j] = P[i * t + j] * (dp[i * t + j] - dot) * scale;
        }
        mm<T>(t, t, dh, dp, t, k, 3 * d, dqkv + off, 3 * d);                     // ∂Q = ∂S K
        mm_tn<T>(t, t, dh, dp, t, q, 3 * d, dqkv + off + d, 3 * d);  // ∂K = ∂Sᵀ Q
      }
    mm_tn<T>(d, M, 3 * d, st.u, d, dqkv, 3 * d, lp.g[QKV_W], 3 * d);
    column_sums<T>(M, 3 * d, dqkv, lp.g[QKV_B]);
    mm_nt<T>(M, 3 * d, d, dqkv, 3 * d, lp.p[QKV_W], 3 * d, du, d, scratch.data());
  }

  void ffn_backward(SublayerState<T>& st, const LayerParams<T>& lp, const T* df, T* du) {
    int64_t M = L.tokens, d = L.d, f = L.d_ff;
    T* da = buf1.data();                                                     // [M, f]
    mm_tn<T>(f, M, d, st.a, f, df, d, lp.g[FC2_W], d);
    column_sums<T>(M, d, df, lp.g[FC2_B]);
    mm_nt<T>(M, d, f, df, d, lp.p[FC2_W], d, da, f, scratch.data());
    if (L.gelu)
      for (int64_t i = 0; i < M * f; i++) da[i] *= gelu_grad(st.h[i]);
    else
      for (int64_t i = 0; i < M * f; i++) da[i] = st.a[i] > 0 ? da[i] : T(0);
    mm_tn<T>(d, M, f, st.u, d, da, f, lp.g[FC1_W], f);
    column_sums<T>(M, f, da, lp.g[FC1_B]);
    mm_nt<T>(M, f, d, da, f, lp.p[FC1_W], f, du, d, scratch.data());
  }

  // ∂L/∂x of the sublayer into dx given ∂L/∂y (dy; dx may alias it: dy is read before dx is written)
  void sublayer_backward(SublayerState<T>& st, const LayerParams<T>& lp, bool attention, const T* dy, T* dx) {
    int64_t M = L.tokens, d = L.d;
    int nw = attention ? ATTN_NORM_W : FFN_NORM_W, nb = nw + 1, gs = nw + 2;
    drip();
    if (lp.g[nw]) {                        // a member without this LayerNorm leaves its gradient 0
      std::fill(lp.g[nw], lp.g[nw] + d, T(0));
      std::fill(lp.g[nb], lp.g[nb] + d, T(0));
    }
    const T* ds = dy;
    if (post) {
      norm_backward<T>(M, d, dy, st.post_xhat, st.post_rstd, lp.p[nw], lp.g[nw], lp.g[nb],
                       ds_buf.data());
      ds = ds_buf.data();
    }
    if (lp.g[gs]) {                        // ∂L/∂g = Σ ∂L/∂s ⊙ f (0 off ReZero)
      T dg = 0;
      if (gated)
        for (int64_t i = 0; i < M * d; i++) dg += ds[i] * st.f[i];
      lp.g[gs][0] = dg;
    }
    T g = gated ? lp.p[gs][0] : T(1);
    for (int64_t i = 0; i < M * d; i++) {
      df_buf[i] = g * ds[i];
      skip_buf[i] = alpha * ds[i];
    }
    if (attention) attention_backward(st, lp, df_buf.data(), du_buf.data());
    else ffn_backward(st, lp, df_buf.data(), du_buf.data());
    if (pre) norm_backward<T>(M, d, du_buf.data(), st.pre_xhat, st.pre_rstd, lp.p[nw], lp.g[nw],
                              lp.g[nb], dx);
    else std::memcpy(dx, du_buf.data(), M * d * sizeof(T));
    for (int64_t i = 0; i < M * d; i++) dx[i] += skip_buf[i];
  }
};

// entries of one member's slot s in one layer
inline int64_t slot_size(const Layout& L, int s) {
  int64_t d = L.d, f = L.d_ff;
  const int64_t size[N_SLOTS] = {d, d, 1, d * 3 * d, 3 * d, d * d, d, d, d, 1, d * f, f, f * d, d};
  return size[s];
}

template <typename T>
LayerParams<T> layer(const Layout& L, const T* const* params, T* const* grads, int64_t l, int64_t k) {
  LayerParams<T> lp;
  for (int s = 0; s < N_SLOTS; s++) {
    int64_t off = (l * L.members + k) * slot_size(L, s);
    lp.p[s] = params && params[s] ? params[s] + off : nullptr;
    lp.g[s] = grads && grads[s] ? grads[s] + off : nullptr;
  }
  return lp;
}

// layer l's parameters (and, where grads is given, its gradients) into the queue
template <typename T>
void prefetch(const Layout& L, const T* const* params, T* const* grads, int64_t l, int64_t k) {
  if (l < 0 || l >= L.n_layers) return;
  LayerParams<T> lp = layer<T>(L, params, grads, l, k);
  for (int s = 0; s < N_SLOTS; s++) {
    next_layer.add(lp.p[s], slot_size(L, s) * int64_t(sizeof(T)), false);
    next_layer.add(lp.g[s], slot_size(L, s) * int64_t(sizeof(T)), true);
  }
}

// n entries from p on into the queue (write: to be written)
template <typename T>
void prefetch_span(const T* p, int64_t n, bool write) {
  next_layer.add(p, n * int64_t(sizeof(T)), write);
}

template <typename F>
void for_members(const Layout& L, F fn) {
  int64_t nt = std::max<int64_t>(1, std::min(L.threads, L.members));
  if (nt == 1) {
    FlushDenormals flush;
    for (int64_t k = 0; k < L.members; k++) fn(k);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < nt; t++)
    pool.emplace_back([&, t] {
      FlushDenormals flush;
      for (int64_t k = t; k < L.members; k += nt) fn(k);
    });
  for (auto& th : pool) th.join();
}

// x [K, M, d]: x_0 in, x_N out; saved (or null): every layer's input [N, K, M, d], or with L.kept > 0
// every layer's intermediates [N, K, L.kept] (Member::bind: no recomputing in the backward pass)
template <typename T>
void forward(const Layout& L, const T* const* params, const T* alpha, const uint8_t* pre,
             const uint8_t* post, const uint8_t* gated, T* x, T* saved) {
  int64_t Md = L.tokens * L.d;
  for_members(L, [&](int64_t k) {
    Member<T> m(L, alpha[k], pre[k], post[k], gated[k]);
    std::vector<T> next(Md);
    T* xk = x + k * Md;
    for (int64_t l = 0; l < L.n_layers; l++) {
      next_layer.restart();                                              // what layer l still lacks, then l + 1's
      prefetch<T>(L, params, nullptr, l + 1, k);
      T* region = saved && L.kept ? saved + (l * L.members + k) * L.kept : nullptr;
      if (region && l + 1 < L.n_layers) prefetch_span(region + L.members * L.kept, L.kept, true);  // l + 1 writes it
      if (saved && !L.kept) std::memcpy(saved + (l * L.members + k) * Md, xk, Md * sizeof(T));
      m.bind(region);
      m.block_forward(layer<T>(L, params, nullptr, l, k), xk, next.data());
      std::memcpy(xk, next.data(), Md * sizeof(T));
    }
  });
}

// Adam inside the backward pass (optional): for each slot with m and v, the layer's gradient goes to
// a per-thread scratch and θ, m, v of the layer are stepped at once (adam_update.h), instead of a
// gradient written to memory here and read back by a separate optimizer pass
template <typename T>
struct AdamInBackward {
  T* m[N_SLOTS];
  T* v[N_SLOTS];
  const double* lr;                      // [K]: member k's rate this step
  AdamConstants c;
};

// dx [K, M, d]: ∂L/∂x_N in, ∂L/∂x_0 out; every parameter gradient written into grads [N, K, r, c],
// except the slots `adam` steps (their parameters are updated in place and get no gradient)
template <typename T>
void backward(const Layout& L, T* const* params, T* const* grads, const AdamInBackward<T>* adam, const T* alpha,
              const uint8_t* pre, const uint8_t* post, const uint8_t* gated, const T* saved, T* dx) {
  int64_t Md = L.tokens * L.d;
  bool stepped[N_SLOTS] = {};
  int64_t scratch_size = 0;
  for (int s = 0; s < N_SLOTS; s++) {
    stepped[s] = adam && params[s] && adam->m[s];
    if (stepped[s]) scratch_size += slot_size(L, s);
  }
  for_members(L, [&](int64_t k) {
    Member<T> m(L, alpha[k], pre[k], post[k], gated[k]);
    std::vector<T> out(Md), dmid(Md), layer_grads(scratch_size);
    T* dk = dx + k * Md;
    for (int64_t l = L.n_layers - 1; l >= 0; l--) {
      next_layer.restart();
      prefetch<T>(L, params, grads, l - 1, k);
      if (adam) {
        prefetch<T>(L, nullptr, adam->m, l - 1, k);             // read and written: as a gradient
        prefetch<T>(L, nullptr, adam->v, l - 1, k);
      }
      LayerParams<T> lp = layer<T>(L, params, grads, l, k);
      T* scratch = layer_grads.data();
      for (int s = 0; s < N_SLOTS; s++)
        if (stepped[s]) {
          lp.g[s] = scratch;
          scratch += slot_size(L, s);
        }
      if (L.kept && l > 0) prefetch_span(saved + ((l - 1) * L.members + k) * L.kept, L.kept, false);
      if (L.kept) m.bind(const_cast<T*>(saved) + (l * L.members + k) * L.kept);   // layer l's intermediates
      else m.block_forward(lp, saved + (l * L.members + k) * Md, out.data());       // or recompute them
      if (L.attention) {
        m.sublayer_backward(m.ffn, lp, false, dk, dmid.data());
        m.sublayer_backward(m.attn, lp, true, dmid.data(), dk);
      } else {
        m.sublayer_backward(m.ffn, lp, false, dk, dk);
      }
      for (int s = 0; s < N_SLOTS; s++)                    // layer l is done with θ: step it
        if (stepped[s]) {
          int64_t n = slot_size(L, s), off = (l * L.members + k) * n;
          drip();
          adam_update(n, params[s] + off, lp.g[s], adam->m[s] + off, adam->v[s] + off, adam->lr[k], adam->c);
        }
    }
  });
}

}  // namespace

extern "C" {
int deepnotes_blocks_abi() { return 4; }
// what this build was sized for: vector bytes, vector registers, tile rows, tile vectors
void deepnotes_kernels_shape(int64_t* out) {
  out[0] = VECTOR_BYTES;
  out[1] = VECTOR_REGISTERS;
  out[2] = TILE_ROWS;
  out[3] = TILE_VECTORS;
}
// GELU(h) and GELU'(h) of n values, as the float32 kernels compute them (the tests' handle on them)
void deepnotes_gelu_f32(int64_t n, const float* h, float* y, float* dy) {
  for (int64_t i = 0; i < n; i++) y[i] = gelu(h[i]);
  for (int64_t i = 0; i < n; i++) dy[i] = gelu_grad(h[i]);
}
// entries of one layer's intermediates for a member with these flags (Layout::kept is the members' largest)
int64_t deepnotes_blocks_kept_entries(const Layout* L, uint8_t pre, uint8_t post, uint8_t gated) {
  return Member<float>(*L, 1.0f, pre, post, gated).kept_entries();
}
void deepnotes_blocks_forward_f32(const Layout* L, const float* const* params, const float* alpha, const uint8_t* pre,
                                  const uint8_t* post, const uint8_t* gated, float* x, float* saved) {
  forward<float>(*L, params, alpha, pre, post, gated, x, saved);
}
void deepnotes_blocks_forward_f64(const Layout* L, const double* const* params, const double* alpha, const uint8_t* pre,
                                  const uint8_t* post, const uint8_t* gated, double* x, double* saved) {
  forward<double>(*L, params, alpha, pre, post, gated, x, saved);
}
void deepnotes_blocks_backward_f32(const Layout* L, float* const* params, float* const* grads,
                                   const AdamInBackward<float>* adam, const float* alpha, const uint8_t* pre,
                                   const uint8_t* post, const uint8_t* gated, const float* saved, float* dx) {
  backward<float>(*L, params, grads, adam, alpha, pre, post, gated, saved, dx);
}
void deepnotes_blocks_backward_f64(const Layout* L, double* const* params, double* const* grads,
                                   const AdamInBackward<double>* adam, const double* alpha, const uint8_t* pre,
                                   const uint8_t* post, const uint8_t* gated, const double* saved, double* dx) {
  backward<double>(*L, params, grads, adam, alpha, pre, post, gated, saved, dx);
}
}
