// One Adam step over a stacked parameter whose members have their own learning rate, in one pass
// over θ, g, m, v (deepnotes/core/optim.py calls it through deepnotes/core/blocks.py).
//
// PyTorch's fused Adam takes one learning rate per tensor; members with their own rate (a warmup on
// some of them) then cost a zeroed buffer, the fused step onto it and θ += η_k·u: 11 passes over
// memory instead of 7, which at a thousand layers is most of the optimizer's time. Per element, with
// k the element's member and t the step:
//     m ← m + (1 − β1)(g − m),   v ← β2 v + (1 − β2) g²,
//     θ ← θ − (η_k / (1 − β1^t)) · m / (√v / √(1 − β2^t) + ε)
// (PyTorch's fused Adam, written the same way: adam_update.h). Elements are split over threads in contiguous
// chunks; each element's arithmetic does not depend on the split.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>
#include "adam_update.h"
#include "flush_denormals.h"

namespace {

// θ, g, m, v: `rows` rows of `inner` elements; row i belongs to member i % members
template <typename T>
void adam_rows(int64_t row0, int64_t row1, int64_t inner, int64_t members, T* p, const T* g, T* m, T* v,
               const double* lr, const AdamConstants& c) {
  FlushDenormals flush;                  // g² of a vanishing gradient is denormal: count it as 0
  for (int64_t row = row0; row < row1; row++) {
    int64_t o = row * inner;
    adam_update(inner, p + o, g + o, m + o, v + o, lr[row % members], c);
  }
}

template <typename T>
void adam(int64_t rows, int64_t inner, int64_t members, T* p, const T* g, T* m, T* v, const double* lr, double b1,
          double b2, double eps, double bc1, double bc2, int64_t threads) {
  int64_t nt = std::max<int64_t>(1, std::min(threads, rows));
  const AdamConstants c{b1, b2, eps, bc1, bc2};
  if (nt == 1) {
    adam_rows(0, rows, inner, members, p, g, m, v, lr, c);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < nt; t++)
    pool.emplace_back([=] {
      adam_rows(rows * t / nt, rows * (t + 1) / nt, inner, members, p, g, m, v, lr, c);
    });
  for (auto& th : pool) th.join();
}

}  // namespace

extern "C" {
void deepnotes_adam_f32(int64_t rows, int64_t inner, int64_t members, float* p, const float* g, float* m, float* v,
                        const double* lr, double b1, double b2, double eps, double bc1, double bc2, int64_t threads) {
  adam<float>(rows, inner, members, p, g, m, v, lr, b1, b2, eps, bc1, bc2, threads);
}
void deepnotes_adam_f64(int64_t rows, int64_t inner, int64_t members, double* p, const double* g, double* m,
                        double* v, const double* lr, double b1, double b2, double eps, double bc1, double bc2,
                        int64_t threads) {
  adam<double>(rows, inner, members, p, g, m, v, lr, b1, b2, eps, bc1, bc2, threads);
}
}
