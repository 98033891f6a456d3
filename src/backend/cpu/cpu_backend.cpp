#include "backend/cpu/cpu_backend.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "theo/ring/automorphism.h"

namespace theo {

namespace cpu {

namespace {

unsigned pick_threads(unsigned threads) {
  if (threads != 0) return threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

CpuBackend::CpuBackend(const RingParams& ring, unsigned threads)
    : Backend(ring),
      alloc_(std::make_shared<HostAllocator>()),
      pool_(pick_threads(threads)),
      table_once_(std::make_unique<std::once_flag[]>(ring_.primes.size())),
      tables_(ring_.primes.size()) {
  brev_.resize(n());
  for (u32 i = 0; i < n(); ++i)
    brev_[i] = bit_reverse(i, ring_.log_n);
}

MemoryReport CpuBackend::memory_report() const {
  MemoryReport r;
  r.live_bytes = alloc_->live_bytes();
  r.peak_bytes = alloc_->peak_bytes();
  return r;
}

std::string CpuBackend::name() const {
  return "cpu (" + std::to_string(pool_.threads()) + " threads)";
}

const NttTable& CpuBackend::ntt_table(PrimeId id) {
  std::call_once(table_once_[id], [&] {
    tables_[id] = std::make_unique<NttTable>(make_ntt_table(ring_.primes[id], ring_.log_n));
  });
  return *tables_[id];
}

std::vector<u32> CpuBackend::automorphism_map(u32 k) const {
  const u32 mask = (2u << ring_.log_n) - 1u;
  std::vector<u32> map(n());
  for (u32 i = 0; i < n(); ++i) {
    const u32 e = static_cast<u32>((static_cast<u64>(2 * brev_[i] + 1) * k) & mask);
    map[i] = brev_[(e - 1) >> 1];
  }
  return map;
}

void CpuBackend::for_limbs(u32 limbs, const std::function<void(u32)>& fn) {
  pool_.run(limbs, [&](std::size_t l) { fn(static_cast<u32>(l)); });
}

void CpuBackend::do_upload(const u32* host, PolyRef dst) {
  if (dst.words() > 0) std::memcpy(dst.data, host, dst.words() * sizeof(u32));
}

void CpuBackend::do_download(ConstPolyRef src, u32* host) {
  if (src.words() > 0) std::memcpy(host, src.data, src.words() * sizeof(u32));
}

void CpuBackend::do_copy(ConstPolyRef src, PolyRef dst) {
  if (deferred([this, src, dst] { do_copy(src, dst); })) return;
  if (src.words() > 0) std::memmove(dst.data, src.data, src.words() * sizeof(u32));
}

void CpuBackend::do_fill_zero(PolyRef dst) {
  if (deferred([this, dst] { do_fill_zero(dst); })) return;
  if (dst.words() > 0) std::memset(dst.data, 0, dst.words() * sizeof(u32));
}

}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend(const RingParams& ring, unsigned threads) {
  return std::make_unique<cpu::CpuBackend>(ring, threads);
}

}  // namespace theo
