// A stand-alone driver of the compiled kernels for a CPU this machine only emulates (an ARM build run
// under qemu-aarch64): the same blocks.cpp, without Python or PyTorch, reading one stack from stdin and
// writing what the kernels compute to stdout. tests/core/test_kernel_targets.py writes the input from a
// float32 engine Stack, runs the driver and compares its output with the PyTorch path's.
//
// stdin (native byte order): Layout's 12 int64 fields (kept ignored) and ε as a double; per member α
// (float32) and pre, post, gated (uint8); per slot of blocks.cpp's Slot, an int64 0/1 and, where 1, the
// parameter [N, K, r, c]; x_0 and ∂L/∂x_N [K, M, d]; an int64 count n and n values h.
// stdout: the build's shape (deepnotes_kernels_shape: 4 int64); x_N; ∂L/∂x_0; each present slot's
// gradient; GELU(h); GELU'(h).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "blocks.cpp"

namespace {

template <typename T>
void read(T* out, size_t n) {
  if (std::fread(out, sizeof(T), n, stdin) != n) {
    std::fprintf(stderr, "kernel_driver: input ended early\n");
    std::exit(2);
  }
}

template <typename T>
void write(const T* data, size_t n) {
  std::fwrite(data, sizeof(T), n, stdout);
}

}  // namespace

int main() {
  Layout L;
  read(&L.n_layers, 12);
  read(&L.eps, 1);
  L.threads = 1;
  int64_t K = L.members, Md = L.tokens * L.d;
  std::vector<float> alpha(K);
  std::vector<uint8_t> pre(K), post(K), gated(K);
  read(alpha.data(), K);
  read(pre.data(), K);
  read(post.data(), K);
  read(gated.data(), K);
  std::vector<std::vector<float>> params(N_SLOTS), grads(N_SLOTS);
  float* p[N_SLOTS] = {};
  float* g[N_SLOTS] = {};
  for (int s = 0; s < N_SLOTS; s++) {
    int64_t present;
    read(&present, 1);
    if (!present) continue;
    size_t n = L.n_layers * K * slot_size(L, s);
    params[s].resize(n);
    grads[s].resize(n);
    read(params[s].data(), n);
    p[s] = params[s].data();
    g[s] = grads[s].data();
  }
  std::vector<float> x(K * Md), dx(K * Md);
  read(x.data(), x.size());
  read(dx.data(), dx.size());
  L.kept = 0;
  for (int64_t k = 0; k < K; k++)
    L.kept = std::max(L.kept, deepnotes_blocks_kept_entries(&L, pre[k], post[k], gated[k]));
  std::vector<float> saved(L.n_layers * K * L.kept);
  deepnotes_blocks_forward_f32(&L, p, alpha.data(), pre.data(), post.data(), gated.data(), x.data(), saved.data());
  deepnotes_blocks_backward_f32(&L, p, g, nullptr, alpha.data(), pre.data(), post.data(), gated.data(),
                                saved.data(), dx.data());
  int64_t n;
  read(&n, 1);
  std::vector<float> h(n), y(n), dy(n);
  read(h.data(), n);
  deepnotes_gelu_f32(n, h.data(), y.data(), dy.data());
  int64_t shape[4];
  deepnotes_kernels_shape(shape);
  write(shape, 4);
  write(x.data(), x.size());
  write(dx.data(), dx.size());
  for (int s = 0; s < N_SLOTS; s++)
    if (p[s]) write(grads[s].data(), grads[s].size());
  write(y.data(), n);
  write(dy.data(), n);
  return 0;
}
