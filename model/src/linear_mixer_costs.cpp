// The kernels of the linear-attention mixers as costs (FLOPs and bytes): the causal conv
// both Gated DeltaNet and Mamba-2 run, and Mamba-2's SSD scan. Counting conventions and
// shapes in layer_program.hpp; layer_ops.cpp puts them into a layer's attention node.
#include <cmath>

#include "hdlab/model/layer_program.hpp"

namespace hdlab::model {

OpCost causal_conv_cost(double channels, double kernel, bool bias, double seqs, double tokens, bool decode,
                        double act_bytes, double state_el_bytes) {
  // [seqs, tokens, channels] -> the same
  const double N = seqs * tokens, state = seqs * channels * (kernel - 1) * state_el_bytes;
  OpCost c;
  c.flops = N * channels * (2 * kernel + (bias ? 1 : 0) + 4);
  c.act_bytes_in = N * channels * act_bytes;
  c.act_bytes_out = N * channels * act_bytes;
  c.kv_bytes_read = decode ? state : 0;  // decode shifts the last kernel - 1 inputs in
  c.kv_bytes_written = state;            // prefill leaves them for the decode that follows
  return c;
}

OpCost mamba2_conv_cost(const Mamba2Dims& m, double seqs, double tokens, bool decode, double act_bytes) {
  return causal_conv_cost(m.conv_channels(), m.kernel, m.conv_bias, seqs, tokens, decode, act_bytes, m.state_el_bytes);
}

OpCost mamba2_ssd_cost(const Mamba2Dims& m, double seqs, double tokens, bool decode, double act_bytes) {
  const double H = m.heads, P = m.head_dim, Nst = m.state, G = m.groups, T = seqs * tokens;
  const double state = seqs * m.state_elements() * m.state_el_bytes;
  const double per_token = T * H * (10 + 2 * P);  // dt steps and the D skip
  OpCost c;
  if (decode) {
    c.flops = T * H * 5 * Nst * P + per_token;
    c.kv_bytes_read = state;
  } else {
    const double Q = m.chunk, chunks = std::ceil(tokens / Q);
    const double per_chunk = 2 * G * Q * Q * Nst + H * (3 * Q * Q + 2 * Q * Q * P + 4 * Q * Nst * P + 2 * Nst * P);
    c.flops = seqs * chunks * per_chunk + per_token;
    // The chunked form runs as several kernels handing each other through memory, in
    // fp32: dt and its cumulative decay ([T, H] each), C B^T of every chunk and group
    // ([seqs * chunks, G, Q, Q]) and the chunk states ([seqs * chunks, H, P, N]; written
    // by the chunk-state kernel and again by the state passing): each written and read.
    const double handed = 4 * (2 * T * H + seqs * chunks * (G * Q * Q + 2 * H * P * Nst));
    c.act_bytes_in += handed;
    c.act_bytes_out += handed;
  }
  c.kv_bytes_written = state;
  // x [T, I], B and C [T, 2 G N], dt [T, H] in; y [T, I] out
  c.act_bytes_in += T * (m.inner() + m.bc() + H) * act_bytes;
  c.act_bytes_out += T * m.inner() * act_bytes;
  return c;
}

}  // namespace hdlab::model
