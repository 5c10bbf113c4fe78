// Private: the resolved window geometry of a 2-D pool.
#pragma once

#include "cortexm/portable/pool2d.h"

namespace cortexm::portable {

struct Pool2dGeometry {
  int64_t planes, h, w, oh, ow;
};

inline Pool2dGeometry pool2d_geometry(const Pool2dParams& p) {
  const int r = p.input.rank;
  Pool2dGeometry g;
  g.planes = p.input.dims[r - 3] * (r == 4 ? p.input.dims[0] : 1);
  g.h = p.input.dims[r - 2];
  g.w = p.input.dims[r - 1];
  g.oh = pool2d_output_size(g.h, p.kernel_h, p.pad_h, p.stride_h, p.dilation_h, p.ceil_mode);
  g.ow = pool2d_output_size(g.w, p.kernel_w, p.pad_w, p.stride_w, p.dilation_w, p.ceil_mode);
  return g;
}

// Checks the geometry shared by max and avg pooling; fills the output shape.
Error check_pool2d(const Pool2dParams& p, Shape* output);

}  // namespace cortexm::portable
