#include <cstring>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/ntt_kernels.h"
#include "theo/ring/shape_checks.h"

namespace theo::cpu {

// Tables are resolved here, in the calling thread, so workers never wait on a table build.
std::vector<CpuBackend::LimbJob> CpuBackend::ntt_jobs(std::span<const PolyRef> polys,
                                                      std::span<const u32> consts,
                                                      std::span<const ConstPolyRef> src,
                                                      std::span<const PolyRef> input_copy) {
  const bool per_poly = checks::consts_per_poly(polys, consts);
  std::vector<LimbJob> jobs;
  std::size_t row = 0;  // first constant of polys[p] in the per-poly form
  for (std::size_t p = 0; p < polys.size(); ++p) {
    for (u32 l = 0; l < polys[p].limbs(); ++l) {
      LimbJob job;
      job.data = polys[p].limb(l);
      job.src = src.empty() ? job.data : src[p].limb(l);
      job.input_copy = input_copy.empty() ? nullptr : input_copy[p].limb(l);
      job.table = &ntt_table(polys[p].basis[l]);
      job.c = consts.empty() ? nullptr : &consts[(per_poly ? row : 0) + l];
      jobs.push_back(job);
    }
    row += polys[p].limbs();
  }
  return jobs;
}

// The reference does what the contract says, one limb at a time: copy the words it reads, move
// them into place, transform in place.
void CpuBackend::run_transform(const std::vector<LimbJob>& jobs, bool inverse) {
  const std::size_t bytes = std::size_t{n()} * sizeof(u32);
  pool_.run(jobs.size(), [&](std::size_t i) {
    const LimbJob& j = jobs[i];
    if (j.input_copy != nullptr) std::memcpy(j.input_copy, j.src, bytes);
    if (j.src != j.data) std::memcpy(j.data, j.src, bytes);
    if (inverse) {
      intt_limb(j.data, *j.table, j.c);
      return;
    }
    ntt_limb(j.data, *j.table, j.c);
    if (j.sub == nullptr) return;
    const u32 q = j.table->q;
    const ShoupConst w = make_shoup(j.s, q);
    const u32 words = n();
    for (u32 c = 0; c < words; ++c)
      j.data[c] = shoup_mul(sub_mod(j.sub[c], j.data[c], q), w, q);
  });
}

void CpuBackend::transform(std::span<const PolyRef> polys, std::span<const u32> consts,
                           std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy,
                           bool inverse) {
  const auto jobs = ntt_jobs(polys, consts, src, input_copy);
  if (deferred([this, p = owned(polys), c = owned(consts), s = owned(src), e = owned(input_copy),
                inverse] { transform(p, c, s, e, inverse); }))
    return;
  run_transform(jobs, inverse);
}

void CpuBackend::do_ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                        std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) {
  transform(polys, pre_consts, src, input_copy, false);
}

void CpuBackend::do_intt(std::span<const PolyRef> polys, std::span<const u32> post_consts,
                         std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) {
  transform(polys, post_consts, src, input_copy, true);
}

void CpuBackend::do_ntt_sub_mul_scalar(std::span<const PolyRef> polys,
                                       std::span<const u32> pre_consts,
                                       std::span<const ConstPolyRef> a, u32 first,
                                       std::span<const u32> s) {
  auto jobs = ntt_jobs(polys, pre_consts, {}, {});
  if (deferred([this, p = owned(polys), c = owned(pre_consts), a = owned(a), first, s = owned(s)] {
        do_ntt_sub_mul_scalar(p, c, a, first, s);
      }))
    return;
  std::size_t row = 0;  // jobs[row] is limb 0 of polys[k]
  for (std::size_t k = 0; k < polys.size(); ++k) {
    for (u32 i = 0; i < a[k].limbs(); ++i) {
      jobs[row + first + i].sub = a[k].limb(i);
      jobs[row + first + i].s = s[i];
    }
    row += polys[k].limbs();
  }
  run_transform(jobs, false);
}

}  // namespace theo::cpu
