// Adam's update of n elements of one tensor in place, PyTorch's fused kernel's formula and order
// (its v update one fused multiply-add), with η_k / (1 − β1^t) already in `step`:
//     m ← m + (1 − β1)(g − m),   v ← β2 v + g·((1 − β2) g),
//     θ ← θ − step · m / (√v / √(1 − β2^t) + ε)
// Used by adam.cpp (a whole stacked tensor after the backward pass) and blocks.cpp (one layer's
// parameters inside the backward pass, while its gradient is still in cache).
#pragma once
#include <cmath>
#include <cstdint>

struct AdamConstants {
  double b1, b2, eps, bc1, bc2;        // β1, β2, ε, 1 − β1^t, 1 − β2^t
};

template <typename T>
inline void adam_update(int64_t n, T* p, const T* g, T* m, T* v, double lr, const AdamConstants& c) {
  const T step = T(lr / c.bc1), one_b1 = T(1 - c.b1), b2 = T(c.b2), one_b2 = T(1 - c.b2), e = T(c.eps),
          root_bc2 = T(std::sqrt(c.bc2));
  for (int64_t j = 0; j < n; j++) {
    T gj = g[j];
    T mj = m[j] + one_b1 * (gj - m[j]);
    T vj = std::fma(gj, gj * one_b2, b2 * v[j]);
    m[j] = mj;
    v[j] = vj;
    p[j] -= step * mj / (std::sqrt(vj) / root_bc2 + e);
  }
}
