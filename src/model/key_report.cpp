// What a bootstrapping streams of its switching keys (the b and a halves separately), of its
// linear-transform plaintexts, and how large the key set is, expanded and with the a halves as
// seeds: the inputs of the compact-key and compact-plaintext predictions
// (docs/performance-journal.md).
//
// Read from the recorder's per-call records (docs/traffic-model.md has each op's bytes):
//   key_mult             reads 3 d w words (digits, kb, ka):          keys 2 d w
//   key_mult_add_scaled  reads 3 d w + 2 w (a0, a1):                  keys 2 d w
//   key_mult_automorphed reads 3 d w + w (add0):                      keys 2 d w
//   key_mult_rotations   reads d w + R 2 d w (+ w with add0):         keys R 2 d w
//   key_mult_sums        the terms (kb, ka) are baby steps, not keys; its plaintexts are the
//                        d words, macs / 2
// with w = the words of one output poly, d digits, R rotations; only calls in a KeyMult scope
// carry switching keys.

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "theo/circuits/bootstrapper.h"
#include "theo/model/report.h"

namespace theo {

namespace {

struct KeyStream {
  double calls = 0;
  double key_b_bytes = 0;  // the b halves (stay stored)
  double key_a_bytes = 0;  // the a halves (a seed each when compact)
  double plaintext_bytes = 0;
  double all_bytes = 0;  // every byte of these calls
};

// The phase of a scope path "Boot/<phase>/...".
std::string phase_of(const std::string& scope) {
  const std::size_t a = scope.find('/');
  if (a == std::string::npos) return scope;
  const std::size_t b = scope.find('/', a + 1);
  return scope.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
}

bool in_key_mult(const std::string& scope) {
  const std::size_t slash = scope.rfind('/');
  return (slash == std::string::npos ? scope : scope.substr(slash + 1)) == "KeyMult";
}

// One KeyMult-scope call's shape: output limbs (Q_l u P), digits, keys applied.
struct KeyCall {
  u32 limbs = 0, digits = 0, keys = 0;
  double key_words = 0;  // both halves
};

// The shape of a recorded call; keys == 0 when it carries no switching key.
KeyCall key_call(const TrafficRecord& r) {
  const TrafficCost& c = r.cost;
  KeyCall k;
  if (c.polys == 0 || c.n == 0 || !in_key_mult(r.scope)) return k;
  k.limbs = c.limbs / c.polys;
  const double w = static_cast<double>(k.limbs) * c.n;  // words of one output poly
  const double v = c.bytes_read / (4 * w);              // words read, in polys
  double d = 0;
  if (r.op == "key_mult") d = std::round(v / 3), k.keys = 1;
  if (r.op == "key_mult_add_scaled") d = std::round((v - 2) / 3), k.keys = 1;
  if (r.op == "key_mult_automorphed") d = std::round((v - 1) / 3), k.keys = 1;
  if (r.op == "key_mult_rotations") {
    k.keys = c.polys / 2;
    d = std::floor(v / (1 + 2.0 * k.keys) + 1e-9);
  }
  k.digits = static_cast<u32>(d);
  k.key_words = 2.0 * k.keys * d * w;
  return k;
}

}  // namespace

nlohmann::json key_stream_json(const TrafficRecorder& rec, double passes, const GpuDescriptor& c) {
  std::map<std::string, KeyStream> by_phase;
  // (phase, limbs, digits) -> key applications, key bytes: where each digit count is used.
  std::map<std::tuple<std::string, u32, u32>, std::pair<double, double>> shapes;
  for (const TrafficRecord& r : rec.records()) {
    if (r.scope.rfind("Boot", 0) != 0) continue;
    KeyStream& k = by_phase[phase_of(r.scope)];
    KeyStream& t = by_phase["(all)"];
    const KeyCall call = key_call(r);
    const double kw = call.key_words;
    if (call.keys > 0) {
      auto& sh = shapes[{phase_of(r.scope), call.limbs, call.digits}];
      sh.first += call.keys;
      sh.second += 4 * kw;
    }
    const double pw = r.op == "key_mult_sums" ? r.cost.macs / 2 : 0;
    for (KeyStream* s : {&k, &t}) {
      s->calls += 1;
      s->key_b_bytes += 2 * kw;  // half of the key words, 4 bytes each
      s->key_a_bytes += 2 * kw;
      s->plaintext_bytes += 4 * pw;
      s->all_bytes += r.cost.bytes_read + r.cost.bytes_written;
    }
  }
  std::printf(
      "\n   switching keys and plaintexts streamed per bootstrapping (GB; DRAM ms at %.2f TB/s)\n"
      "   %-12s %8s %8s %8s %10s %10s %8s\n",
      c.dram_copy_gbps / 1e3, "phase", "all GB", "key b", "key a", "plaintext", "a DRAM ms",
      "pt ms");
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [phase, k] : by_phase) {
    const double all = k.all_bytes / passes, b = k.key_b_bytes / passes, a = k.key_a_bytes / passes,
                 pt = k.plaintext_bytes / passes;
    std::printf("   %-12s %8.3f %8.3f %8.3f %10.3f %10.3f %8.3f\n", phase.c_str(), all / 1e9,
                b / 1e9, a / 1e9, pt / 1e9, c.dram_us(a) / 1e3, c.dram_us(pt) / 1e3);
    j[phase] = {{"traffic_GB", all / 1e9},
                {"key_b_GB", b / 1e9},
                {"key_a_GB", a / 1e9},
                {"plaintext_GB", pt / 1e9},
                {"key_a_dram_ms", c.dram_us(a) / 1e3},
                {"plaintext_dram_ms", c.dram_us(pt) / 1e3}};
  }
  std::printf(
      "\n   key applications per bootstrapping by phase, output limbs and digits (a pipelined key "
      "switch is two: its Q and its P limbs)\n");
  nlohmann::json sj = nlohmann::json::array();
  for (const auto& [key, v] : shapes) {
    const auto& [phase, limbs, digits] = key;
    std::printf("   %-12s limbs %3u digits %u: %6.1f keys, %7.3f GB of keys\n", phase.c_str(),
                limbs, digits, v.first / passes, v.second / passes / 1e9);
    sj.push_back({{"phase", phase},
                  {"limbs", limbs},
                  {"digits", digits},
                  {"keys", v.first / passes},
                  {"key_GB", v.second / passes / 1e9}});
  }
  j["shapes"] = sj;
  return j;
}

nlohmann::json key_set_json(const BootstrappingKeys& keys) {
  double total = 0, a_bytes = 0, count = 0;
  const auto add = [&](const SwitchingKey& k) {
    if (k.empty()) return;
    count += 1;
    // a_d has b_d's shape (a compact key keeps only its seed).
    for (u32 d = 0; d < k.dnum(); ++d) {
      total += 8.0 * static_cast<double>(k.b(d).words());
      a_bytes += 4.0 * static_cast<double>(k.b(d).words());
    }
  };
  add(keys.relin.key());
  add(keys.to_sparse);
  add(keys.to_dense);
  for (const u32 g : keys.galois.galois_elements())
    add(*keys.galois.find(g));
  // Compact: the b halves, and per key a 32-byte seed, a scheme id and its key index.
  const double compact = total - a_bytes + count * (32 + 8);
  const double gib = 1024.0 * 1024 * 1024;
  std::printf(
      "\n   key set: %.0f switching keys, %.2f GiB expanded, %.2f GiB with the a halves as seeds\n",
      count, total / gib, compact / gib);
  return {{"switching_keys", count},
          {"expanded_GiB", total / gib},
          {"compact_GiB", compact / gib},
          {"a_halves_GiB", a_bytes / gib}};
}

}  // namespace theo
