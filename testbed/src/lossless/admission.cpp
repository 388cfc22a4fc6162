#include "lossless/admission.hpp"

namespace rocehil::testbed::lossless {

double wred_probability(const Wred& wred, std::uint32_t depth_bytes) {
  if (!wred.ecn || wred.kmax_bytes == 0 || depth_bytes < wred.kmin_bytes) return 0;
  if (depth_bytes >= wred.kmax_bytes || wred.kmax_bytes <= wred.kmin_bytes) return 1;
  return wred.pmax * static_cast<double>(depth_bytes - wred.kmin_bytes) /
         static_cast<double>(wred.kmax_bytes - wred.kmin_bytes);
}

Admission admit(const QueueProfile& queue, std::uint32_t depth_bytes, std::uint32_t packet_bytes,
                bool ect, double uniform) {
  if (!queue.lossless && depth_bytes + packet_bytes > queue.limit_bytes) return Admission::drop;
  const bool hit = uniform < wred_probability(queue.wred, depth_bytes);
  if (!hit) return Admission::enqueue;
  if (ect) return Admission::enqueue_marked;
  // Not ECN-capable: a lossy queue drops it as RED would; a lossless one never drops.
  return queue.lossless ? Admission::enqueue : Admission::drop;
}

}  // namespace rocehil::testbed::lossless
