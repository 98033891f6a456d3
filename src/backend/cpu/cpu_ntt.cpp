#include <string>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/ntt_kernels.h"
#include "theo/ring/shape_checks.h"

namespace theo::cpu {

// Tables are resolved here, in the calling thread, so workers never wait on a table build.
std::vector<CpuBackend::LimbJob> CpuBackend::ntt_jobs(std::string_view op,
                                                      std::string_view consts_name,
                                                      std::span<const PolyRef> polys,
                                                      std::span<const u32> consts) {
  std::vector<LimbJob> jobs;
  for (std::size_t p = 0; p < polys.size(); ++p) {
    const std::string arg = checks::indexed("polys", p);
    check(op, arg, polys[p]);
    if (!consts.empty()) {
      checks::same_shape(op, "polys[0]", polys[0], arg, polys[p]);
      if (p == 0) checks::limb_consts(op, consts_name, *this, polys[0], consts);
    }
    for (u32 l = 0; l < polys[p].limbs(); ++l)
      jobs.push_back(
          {polys[p].limb(l), &ntt_table(polys[p].basis[l]), consts.empty() ? nullptr : &consts[l]});
  }
  return jobs;
}

void CpuBackend::ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts) {
  const auto jobs = ntt_jobs("ntt", "pre_consts", polys, pre_consts);
  pool_.run(jobs.size(), [&](std::size_t i) { ntt_limb(jobs[i].data, *jobs[i].table, jobs[i].c); });
}

void CpuBackend::intt(std::span<const PolyRef> polys, std::span<const u32> post_consts) {
  const auto jobs = ntt_jobs("intt", "post_consts", polys, post_consts);
  pool_.run(jobs.size(),
            [&](std::size_t i) { intt_limb(jobs[i].data, *jobs[i].table, jobs[i].c); });
}

}  // namespace theo::cpu
