// theo_bench --ablation: runs the steps, prints the tables and writes the JSON (after every
// section, so that a run cut short keeps what it measured).

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include "ablation_bench.h"
#include "host_info.h"
#include "model_bench.h"
#include "records.h"

namespace theo::bench {

namespace {

void write_json(const AblationOptions& o, const nlohmann::json& j) {
  if (o.out.empty()) return;
  std::ofstream f(o.out);
  if (!f) throw ParameterError("theo_bench --ablation: cannot write " + o.out);
  f << j.dump(1) << "\n";
}

nlohmann::json step_json(const AblationStep& s) {
  nlohmann::json levers = nlohmann::json::object();
  for (const std::string& n : bootstrap_lever_names())
    levers[n] = bootstrap_lever(s.opt, n);
  return {{"step", s.name},
          {"available", s.available},
          {"boot_only", s.boot_only},
          {"same_words", s.same_words},
          {"switches",
           {{"fusion", s.opt.fusion},
            {"bconv_refined", s.opt.bconv_refined},
            {"graphs", s.opt.graphs},
            {"multi_poly_caching", s.opt.multi_poly_caching},
            {"pipelining", s.opt.pipelining}}},
          {"levers", levers}};
}

// The record of a step in a section; a step whose mechanism this build lacks is "n/a" (and says
// so), the others get their measurements added.
nlohmann::json step_record(const AblationStep& s) {
  nlohmann::json rec = step_json(s);
  if (!s.available) {
    rec["result"] = "n/a";
    std::printf("  %-22s n/a (no mechanism in this build)\n", s.name.c_str());
  }
  return rec;
}

// The first measured output hash of a section against every other: bit-exactness across steps.
bool same_hashes(const std::vector<std::string>& hashes) {
  for (const std::string& h : hashes)
    if (h != hashes.front()) return false;
  return true;
}

}  // namespace

int run_ablation(const AblationOptions& o) {
  const std::vector<AblationStep> steps = ablation_steps();
  nlohmann::json j;
  {
    const ContextPtr probe = ablation_context(o, o.keyswitch_preset, Optimizations::all());
    j["header"] = header_record(
        {{"mode", "ablation"},
         {"backend", o.backend},
         {"device", probe->backend().name()},
         {"l2_bytes", probe->backend().l2_bytes()},
         {"gpu", to_json(model_gpu(o.gpu, unwrap_recording_backend(probe->backend())))},
         {"reps", o.reps},
         {"warmup", o.warmup},
         {"boot_reps", o.boot_reps}});
    std::printf("theo_bench --ablation on %s (L2 %.1f MB)\n", probe->backend().name().c_str(),
                static_cast<double>(probe->backend().l2_bytes()) / 1e6);
  }
  j["steps"] = nlohmann::json::array();
  for (const AblationStep& s : steps)
    j["steps"].push_back(step_json(s));

  std::printf("\n== KeySwitch (%s), steps added in turn\n", o.keyswitch_preset.c_str());
  nlohmann::json ks = nlohmann::json::array();
  std::map<u32, std::vector<std::string>> ks_hashes;  // per level, over the steps
  for (const AblationStep& s : steps) {
    if (s.boot_only) continue;  // a bootstrapping lever: the key switch is the one before
    nlohmann::json rec = step_record(s);
    if (s.available) {
      rec["levels"] = keyswitch_step(o, s);
      for (const auto& l : rec["levels"])
        ks_hashes[l["level"].get<u32>()].push_back(l["output_hash"].get<std::string>());
    }
    ks.push_back(std::move(rec));
    j["keyswitch"] = ks;
    write_json(o, j);
  }
  bool ks_exact = true;
  for (const auto& [level, hashes] : ks_hashes)
    ks_exact = ks_exact && same_hashes(hashes);
  j["keyswitch_bit_exact_across_steps"] = ks_exact;
  std::printf("  outputs bit-exact across steps: %s\n", ks_exact ? "yes" : "NO");

  std::printf("\n== Batched key switches (all on), B = 1..%u\n", o.max_batch);
  j["batching"] = batching_sweep(o);
  write_json(o, j);

  if (!o.skip_boot) {
    for (const std::string& preset : o.boot_presets) {
      std::printf("\n== Boot (%s), steps added in turn\n", preset.c_str());
      nlohmann::json boot = nlohmann::json::array();
      std::vector<std::string> hashes;
      for (const AblationStep& s : steps) {
        nlohmann::json rec = step_record(s);
        if (s.available) {
          rec["boot"] = boot_step(o, preset, s);
          if (s.same_words) hashes.push_back(rec["boot"]["output_hash"].get<std::string>());
        }
        boot.push_back(std::move(rec));
        j["boot"][preset] = boot;
        write_json(o, j);
      }
      j["boot_bit_exact_across_steps"][preset] = same_hashes(hashes);
      std::printf("  outputs bit-exact across the same-words steps: %s\n",
                  same_hashes(hashes) ? "yes" : "NO");
      write_json(o, j);
    }
  }
  std::printf("\nwritten: %s\n", o.out.empty() ? "(no --out)" : o.out.c_str());
  return 0;
}

}  // namespace theo::bench
