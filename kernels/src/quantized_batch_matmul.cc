#include "cortexm/kernels/quantized_batch_matmul.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

int32_t dot(const int8_t* __restrict a, const int8_t* __restrict b, int32_t length) {
  int32_t sum = 0;
  for (int32_t i = 0; i < length; ++i) sum += static_cast<int16_t>(a[i]) * b[i];
  return sum;
}

uint32_t row_sum(const int8_t* row, int32_t length) {
  int32_t sum = 0;
  for (int32_t i = 0; i < length; ++i) sum += row[i];
  return static_cast<uint32_t>(sum);
}

// Extents >= 1 and cols <= max_cols.
Error check_extents(const BatchMatmulParams& p, int32_t max_cols, const char* cols_bound) {
  if (p.batch < 1) return invalid("lhs.shape[0]", p.batch, "must be >= 1");
  if (p.lhs_rows < 1) return invalid("lhs.shape[1]", p.lhs_rows, "must be >= 1");
  if (p.rhs_rows < 1) return invalid("rhs.shape[1]", p.rhs_rows, "must be >= 1");
  if (p.cols < 1) return invalid("lhs.shape[2]", p.cols, "must be >= 1");
  if (p.cols > max_cols) return invalid("lhs.shape[2]", p.cols, cols_bound);
  return kOk;
}

}  // namespace

CORTEXM_PREPARE_STEP Error quantized_batch_matmul_prepare(const BatchMatmulParams& p) {
  // The int16 x int8 products of one dot stay below 2^31 in magnitude up to 2^16 columns.
  CORTEXM_RETURN_IF_ERROR(check_extents(p, 65536, "must be <= 65536"));
  CORTEXM_RETURN_IF_ERROR(check_input_offset("lhs_offset", p.lhs_offset));
  CORTEXM_RETURN_IF_ERROR(check_input_offset("rhs_offset", p.rhs_offset));
  CORTEXM_RETURN_IF_ERROR(check_output_offset("output_offset", p.output_offset));
  CORTEXM_RETURN_IF_ERROR(check_multiplier("output_multiplier", p.multiplier, "output_shift", p.shift));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max));
  return kOk;
}

size_t quantized_batch_matmul_scratch_size(const BatchMatmulParams& p, Isa /*isa*/) {
  return p.rhs_rows < 1 ? 0 : sizeof(int32_t) * static_cast<size_t>(p.rhs_rows);
}

// sum_k (l + lo)(r + ro) = sum l*r + lo * sum r + ro * sum l + K * lo * ro, modulo 2^32.
void quantized_batch_matmul(const BatchMatmulParams& params, const int8_t* lhs, const int8_t* rhs,
                            int8_t* output, void* scratch) {
  const BatchMatmulParams p = params;  // a local copy: output stores cannot alias it
  uint32_t* rhs_sums = static_cast<uint32_t*>(scratch);
  const int32_t m_rows = p.lhs_rows, n_rows = p.rhs_rows, k = p.cols;
  const uint32_t lo = static_cast<uint32_t>(p.lhs_offset), ro = static_cast<uint32_t>(p.rhs_offset);
  const uint32_t both = static_cast<uint32_t>(k) * lo * ro;
  for (int32_t b = 0; b < p.batch; ++b) {
    const int8_t* lhs_b = lhs + int64_t{b} * m_rows * k;
    const int8_t* rhs_b = rhs + int64_t{b} * n_rows * k;
    int8_t* out_b = output + int64_t{b} * m_rows * n_rows;
    for (int32_t n = 0; n < n_rows; ++n)
      rhs_sums[n] = lo * row_sum(rhs_b + int64_t{n} * k, k) + both;
    for (int32_t m = 0; m < m_rows; ++m) {
      const int8_t* row = lhs_b + int64_t{m} * k;
      const uint32_t lhs_term = ro * row_sum(row, k);
      for (int32_t n = 0; n < n_rows; ++n) {
        const uint32_t acc =
            static_cast<uint32_t>(dot(row, rhs_b + int64_t{n} * k, k)) + lhs_term + rhs_sums[n];
        const int32_t scaled = requantize(static_cast<int32_t>(acc), p.multiplier, p.shift);
        out_b[int64_t{m} * n_rows + n] = static_cast<int8_t>(
            clamp(static_cast<int32_t>(static_cast<uint32_t>(scaled) +
                                       static_cast<uint32_t>(p.output_offset)),
                  p.activation_min, p.activation_max));
      }
    }
  }
}

CORTEXM_PREPARE_STEP Error quantized_batch_matmul_s16_prepare(const BatchMatmulParams& p) {
  CORTEXM_RETURN_IF_ERROR(check_extents(p, 1 << 17, "must be <= 2^17"));
  if (p.lhs_offset != 0) return invalid("lhs_offset", p.lhs_offset, "must be 0 (symmetric int16)");
  if (p.rhs_offset != 0) return invalid("rhs_offset", p.rhs_offset, "must be 0 (symmetric int16)");
  if (p.output_offset != 0) return invalid("output_offset", p.output_offset, "must be 0 (symmetric int16)");
  if (p.multiplier < 0) return invalid("output_multiplier", p.multiplier, "must be in [0, 2^31)");
  if (p.shift < kMinShift || p.shift > kMaxShiftS64)
    return invalid("output_shift", p.shift, "must be in [-31, 7]");
  return check_activation_range(p.activation_min, p.activation_max, /*int16=*/true);
}

// One output row at a time: each lhs row against every rhs row, as arm_nn_vec_mat_mult_t_s16_s16.
void quantized_batch_matmul_s16(const BatchMatmulParams& params, const int16_t* lhs,
                                const int16_t* rhs, int16_t* output) {
  const BatchMatmulParams p = params;  // a local copy: output stores cannot alias it
  const int32_t reduced = reduce_multiplier(p.multiplier);
  const int32_t m_rows = p.lhs_rows, n_rows = p.rhs_rows, k = p.cols;
  for (int32_t b = 0; b < p.batch; ++b) {
    const int16_t* rhs_b = rhs + int64_t{b} * n_rows * k;
    for (int32_t m = 0; m < m_rows; ++m) {
      const int16_t* __restrict row = lhs + (int64_t{b} * m_rows + m) * k;
      int16_t* out = output + (int64_t{b} * m_rows + m) * n_rows;
      for (int32_t n = 0; n < n_rows; ++n) {
        const int16_t* __restrict col = rhs_b + int64_t{n} * k;
        int64_t acc = 0;
        for (int32_t i = 0; i < k; ++i) acc += int32_t{row[i]} * col[i];
        out[n] = static_cast<int16_t>(
            clamp(requantize_s64(acc, reduced, p.shift), p.activation_min, p.activation_max));
      }
    }
  }
}

}  // namespace cortexm
