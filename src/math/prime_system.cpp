// The 25-30 prime system generator (Cheddar §3.2, Table 2).
//
// 1. Rescaling cycle. Going up one level changes the level's prime counts by a transition
//    (dm, dt): dm main primes (~2^x) and dt terminal primes (~2^y) enter (negative: leave), so the
//    modulus grows by dm*x + dt*y bits, which must equal the scale s. A cycle is either a single
//    transition (a, 0) (x = s/a: single rescaling) or n1 copies of a terminal-consuming transition
//    (a1, b1 < 0) and n2 copies of a terminal-producing one (a2, b2 > 0) with n1*b1 + n2*b2 = 0;
//    the two equations a1*x + b1*y = s, a2*x + b2*y = s fix x and y. A small search over |a|, |b|
//    <= 6 and all orders of the transitions picks the cycle with x closest to 30, y closest to 25,
//    the fewest terminal primes (<= 5) and the shortest period. For s = 30, 35, 40, 45, 50 this
//    finds x = 30, y = 25 exactly: s=30 (+1,0); s=35 (+2,-1)x5 (-3,+5); s=40 (+3,-2)(+3,-2)(-2,+4);
//    s=45 (+4,-3)(-1,+3); s=50 (+5,-4)(0,+2)(0,+2). Other integer scales get non-integer x, y
//    (e.g. s=38: 30.4/22.8-bit primes).
// 2. Level 0: the cycle phase and main-prime count whose modulus is closest to log_base bits;
//    when that is far off, up to three "base" main primes (indices 0.., never dropped) of free
//    size make up the difference (e.g. s=30: two ~2^20 primes, like the anchor bootparam_30).
// 3. Prime values, greedily level by level from the bottom: the primes that first appear at level
//    l are chosen (coordinate descent over pools of NTT primes near their nominal size) so that the
//    scales Delta_l of level l and of the following levels whose primes are all known by then stay
//    on 2^s. The scale follows the library's definition (level_log2_scales): Delta_0 = 2^s,
//    Delta_l = sqrt(Delta_{l-1} * Q_l/Q_{l-1}); its deviation e_l = (e_{l-1} + log2(Q_l/Q_{l-1}) -
//    s)/2 is damped going up, so choosing each new prime set to cancel the running error keeps
//    every level within a few thousandths of a bit in practice (the requirement is 0.1 bit).
// 4. Bootstrapping levels: double rescaling, two new main primes of ~log_boot_scale/2 bits per
//    level; then, at the very top (as the anchor parameter files do, for CoeffToSlot), the terminal
//    primes not yet in the last non-bootstrapping level enter two per level (one with a new main
//    prime when their count is odd), so the top level holds every prime: Q_top = Q_max.
// 5. Auxiliary primes: alpha primes just below 2^31, distinct from all others; alpha defaults to
//    ceil(max_limbs / 4), i.e. dnum = 4 digits as in the anchor files (12 aux primes for 47-48
//    limbs), a balance of key size / key-switching cost against the log2(PQ) budget.

#include "theo/math/prime_system.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <unordered_set>

#include "theo/errors.h"
#include "theo/math/primes.h"

namespace theo {

using ld = long double;

std::vector<double> level_log2_scales(const ParameterSet& p) {
  std::vector<double> out;
  ld prev_q = 0, d = static_cast<ld>(p.log_default_scale);
  for (u32 l = 0; l < p.level_config.size(); ++l) {
    ld q = 0;
    for (u32 i = 0; i < p.level_config[l][0]; ++i)
      q += std::log2(static_cast<ld>(p.main_primes.at(i)));
    for (u32 i = 0; i < p.level_config[l][1]; ++i)
      q += std::log2(static_cast<ld>(p.terminal_primes.at(i)));
    if (l > 0) d = (d + (q - prev_q)) / 2;
    out.push_back(static_cast<double>(d));
    prev_q = q;
  }
  return out;
}

namespace {

[[noreturn]] void fail(const std::string& m) {
  throw ParameterError(m);
}

struct Tr {
  int dm, dt;
};

struct Cycle {
  std::vector<Tr> seq;
  double x = 0, y = 0;  // nominal log2 sizes of main / terminal primes
  int T = 0;            // terminal primes the cycle uses
  double score = 0;
};

std::string cycle_str(const Cycle& c) {
  std::string s;
  for (const auto& t : c.seq) {
    s += '(';
    s += std::to_string(t.dm);
    s += ',';
    s += std::to_string(t.dt);
    s += ')';
  }
  return s;
}

std::vector<Cycle> find_cycles(double s, int t_max) {
  constexpr double XLO = 26, XHI = 30.95, YLO = 20, YHI = 29;
  std::vector<Cycle> out;
  for (int a = 1; a <= 6; ++a) {
    const double x = s / a;
    if (x >= XLO && x <= XHI) out.push_back({{{a, 0}}, x, 0, 0, 4 * std::abs(x - 30) + 0.1});
  }
  for (int a1 = -6; a1 <= 6; ++a1)
    for (int b1 = -6; b1 <= -1; ++b1)
      for (int a2 = -6; a2 <= 6; ++a2)
        for (int b2 = 1; b2 <= 6; ++b2) {
          const int det = a1 * b2 - a2 * b1;
          if (det == 0) continue;
          const double x = s * (b2 - b1) / det, y = s * (a1 - a2) / det;
          if (!(x >= XLO && x <= XHI && y >= YLO && y <= YHI && y < x - 1)) continue;
          const int g = std::gcd(-b1, b2), n1 = b2 / g, n2 = -b1 / g, len = n1 + n2;
          if (len > 8) continue;
          // All orders of n1 consuming and n2 producing transitions; keep the fewest terminals.
          int bestT = 1 << 30;
          std::vector<Tr> best;
          for (u32 mask = 0; mask < (1u << len); ++mask) {
            if (std::popcount(mask) != n1) continue;
            std::vector<Tr> seq;
            int pre = 0, mx = 0, mn = 0;
            for (int i = 0; i < len; ++i) {
              const Tr t = (mask >> i & 1) ? Tr{a1, b1} : Tr{a2, b2};
              seq.push_back(t);
              pre += t.dt;
              mx = std::max(mx, pre);
              mn = std::min(mn, pre);
            }
            if (mx - mn < bestT) {
              bestT = mx - mn;
              best = seq;
            }
          }
          if (bestT > t_max) continue;
          const double score = 4 * std::abs(x - 30) + std::abs(y - 25) + 0.5 * bestT + 0.1 * len;
          out.push_back({best, x, y, bestT, score});
        }
  std::stable_sort(out.begin(), out.end(),
                   [](const Cycle& a, const Cycle& b) { return a.score < b.score; });
  return out;
}

struct State {
  int m, t;
};

enum class Kind { kBase, kScale, kBootDR, kBootTerm };

// One attempt at building the set for a given cycle; returns false (with a reason) when the prime
// pools cannot meet it.
struct Builder {
  double s = 0, boot_scale = 0, log_base = 0;
  u32 log_n = 0;
  int free_count = 0;  // base main primes 0..free_count-1 of free size (sized for log_base)
  std::string why;

  std::vector<State> lv;
  std::vector<Kind> kind;
  std::vector<ld> main_nom, term_nom;  // nominal log2 sizes by index
  std::vector<u32> main_q, term_q;     // chosen values (0: not yet)
  std::vector<ld> main_lg, term_lg;

  // Pools of NTT primes by nominal size (key: round(100 * nominal)).
  std::map<int, std::vector<std::pair<u32, ld>>> pools;

  const std::vector<std::pair<u32, ld>>& pool(ld nominal) {
    const int key = static_cast<int>(std::lround(nominal * 100));
    auto it = pools.find(key);
    if (it != pools.end()) return it->second;
    const ld c = std::exp2(nominal);
    const u64 lo = static_cast<u64>(std::exp2(nominal - 0.6L));
    const u64 hi = std::min<u64>(static_cast<u64>(std::exp2(nominal + 0.6L)), u64{1} << 31);
    const auto primes = ntt_primes_near(log_n, static_cast<u64>(c), 240, lo, hi);
    std::vector<std::pair<u32, ld>> v;
    for (u32 q : primes)
      v.emplace_back(q, std::log2(static_cast<ld>(q)));
    return pools.emplace(key, std::move(v)).first->second;
  }

  // Ratio of level l (l >= 1) as a list of (+1/-1, is_terminal, index).
  struct Term {
    int sign;
    bool term;
    int idx;
  };
  std::vector<std::vector<Term>> ratio;

  ld lg(const Term& t) const { return t.term ? term_lg[t.idx] : main_lg[t.idx]; }
  ld rho(int l) const {
    ld r = 0;
    for (const auto& t : ratio[l])
      r += t.sign * lg(t);
    return r;
  }
  ld log_q(int l) const {
    ld r = 0;
    for (int i = 0; i < lv[l].m; ++i)
      r += main_lg[i];
    for (int i = 0; i < lv[l].t; ++i)
      r += term_lg[i];
    return r;
  }

  bool run() {
    const int L = static_cast<int>(lv.size());
    ratio.assign(L, {});
    for (int l = 1; l < L; ++l) {
      const State a = lv[l - 1], b = lv[l];
      for (int i = std::min(a.m, b.m); i < std::max(a.m, b.m); ++i)
        ratio[l].push_back({b.m > a.m ? 1 : -1, false, i});
      for (int i = std::min(a.t, b.t); i < std::max(a.t, b.t); ++i)
        ratio[l].push_back({b.t > a.t ? 1 : -1, true, i});
    }
    main_q.assign(main_nom.size(), 0);
    term_q.assign(term_nom.size(), 0);
    main_lg.assign(main_nom.size(), 0);
    term_lg.assign(term_nom.size(), 0);
    std::unordered_set<u32> used;
    int known_m = 0, known_t = 0;
    ld e_prev = 0;  // scale deviation of the previous level
    // Levels where new primes appear.
    std::vector<int> new_at;
    {
      int km = 0, kt = 0;
      for (int l = 0; l < L; ++l) {
        if (lv[l].m > km || lv[l].t > kt) new_at.push_back(l);
        km = std::max(km, lv[l].m);
        kt = std::max(kt, lv[l].t);
      }
    }
    // Receding horizon: the primes that appear at new_at[w] are chosen jointly with those of the
    // next kHorizon - 1 windows (which are then re-chosen in their own turn), so that a level
    // whose ratio mixes primes of two windows is anticipated.
    constexpr std::size_t kHorizon = 3;
    for (std::size_t w = 0; w < new_at.size(); ++w) {
      const int l0 = new_at[w];
      const int l1 = (w + kHorizon < new_at.size()) ? new_at[w + kHorizon] : L;  // window [l0, l1)
      // Deviation chain up to l0 - 1 with the primes known so far.
      e_prev = 0;
      for (int l = 1; l < l0; ++l)
        if (kind[l] == Kind::kScale) e_prev = (e_prev + rho(l) - static_cast<ld>(s)) / 2;
      std::vector<Term> fresh;    // all primes new in [l0, l1)
      std::vector<int> fresh_at;  // the level each first appears at
      int km = known_m, kt = known_t;
      for (int l = l0; l < l1; ++l) {
        for (int i = km; i < lv[l].m; ++i) {
          fresh.push_back({1, false, i});
          fresh_at.push_back(l);
        }
        for (int i = kt; i < lv[l].t; ++i) {
          fresh.push_back({1, true, i});
          fresh_at.push_back(l);
        }
        km = std::max(km, lv[l].m);
        kt = std::max(kt, lv[l].t);
      }
      // Later levels whose ratio is fully known after this window (recurring ratios).
      std::vector<int> far;
      for (int l = l1; l < L; ++l) {
        if (kind[l] == Kind::kBootTerm || kind[l] == Kind::kBase) continue;
        bool known = true;
        for (const auto& t : ratio[l])
          known &= t.term ? t.idx < kt : t.idx < km;
        if (known) far.push_back(l);
      }
      auto cost = [&]() {
        ld c = 0, e = e_prev;
        for (int l = l0; l < l1; ++l) {
          switch (kind[l]) {
            case Kind::kBase: {  // free base primes make up log_base bits
              const ld d = log_q(0) - static_cast<ld>(log_base);
              if (free_count > 0) c += 0.01L * d * d;
              break;
            }
            case Kind::kScale:
              e = (e + rho(l) - static_cast<ld>(s)) / 2;
              c += e * e;
              break;
            case Kind::kBootDR: {
              const ld d = rho(l) - static_cast<ld>(boot_scale);
              c += 0.01L * d * d;
              break;
            }
            case Kind::kBootTerm:
              break;
          }
        }
        for (int l : far) {
          const ld d = rho(l) - static_cast<ld>(kind[l] == Kind::kScale ? s : boot_scale);
          c += (kind[l] == Kind::kScale ? 0.25L : 0.01L) * d * d;
        }
        return c;
      };
      auto set = [&](const Term& t, u32 q, ld g) {
        if (t.term) {
          term_q[t.idx] = q;
          term_lg[t.idx] = g;
        } else {
          main_q[t.idx] = q;
          main_lg[t.idx] = g;
        }
      };
      // Start: the unused pool primes nearest to each nominal size.
      for (const auto& t : fresh) {
        const auto& pl = pool(t.term ? term_nom[t.idx] : main_nom[t.idx]);
        bool ok = false;
        for (const auto& [q, g] : pl)
          if (!used.count(q)) {
            set(t, q, g);
            used.insert(q);
            ok = true;
            break;
          }
        if (!ok) {
          char buf[160];
          std::snprintf(buf, sizeof buf, "not enough NTT primes near 2^%.2f for N = 2^%u",
                        static_cast<double>(t.term ? term_nom[t.idx] : main_nom[t.idx]), log_n);
          why = buf;
          return false;
        }
      }
      // Coordinate descent.
      ld best = cost();
      for (int pass = 0; pass < 8 && best > 0; ++pass) {
        bool improved = false;
        for (std::size_t f = 0; f < fresh.size(); ++f) {
          const Term& t = fresh[f];
          const auto& pl = pool(t.term ? term_nom[t.idx] : main_nom[t.idx]);
          const u32 cur = t.term ? term_q[t.idx] : main_q[t.idx];
          const ld cur_g = t.term ? term_lg[t.idx] : main_lg[t.idx];
          u32 bq = cur;
          ld bg = cur_g;
          for (const auto& [q, g] : pl) {
            if (q == cur || used.count(q)) continue;
            set(t, q, g);
            const ld c = cost();
            if (c < best - 1e-15L) {
              best = c;
              bq = q;
              bg = g;
            }
          }
          set(t, bq, bg);
          if (bq != cur) {
            used.erase(cur);
            used.insert(bq);
            improved = true;
          }
        }
        if (!improved) break;
      }
      // Commit the primes of window w; the later ones are re-chosen in their own turn.
      known_m = std::max(known_m, lv[l0].m);
      known_t = std::max(known_t, lv[l0].t);
      for (std::size_t f = 0; f < fresh.size(); ++f) {
        const Term& t = fresh[f];
        if (fresh_at[f] == l0) continue;
        used.erase(t.term ? term_q[t.idx] : main_q[t.idx]);
        set(t, 0, 0);
      }
    }
    return true;
  }
};

}  // namespace

ParameterSet generate_prime_system(const PrimeSystemSpec& spec) {
  if (spec.log_n < 10 || spec.log_n > 17)
    fail("log_n = " + std::to_string(spec.log_n) + " outside 10..17");
  if (spec.log_scale < 30 || spec.log_scale > 50)
    fail("log_scale = " + std::to_string(spec.log_scale) + " outside 30..50");
  const u32 boot_scale = spec.boot_levels ? (spec.log_boot_scale ? spec.log_boot_scale : 58) : 0;
  if (spec.boot_levels && (boot_scale < 40 || boot_scale > 61))
    fail("log_boot_scale = " + std::to_string(boot_scale) +
         " outside 40..61 (two primes < 2^31 per level)");
  const double s = spec.log_scale;
  const double log_base = spec.log_base ? spec.log_base : s + 10;
  if (log_base <= s || log_base > 200)
    fail("log_base = " + std::to_string(spec.log_base) +
         " must be above log_scale = " + std::to_string(spec.log_scale) + " (and at most 200)");
  if (spec.levels > 200 || spec.boot_levels > 100)
    fail("levels = " + std::to_string(spec.levels) +
         ", boot_levels = " + std::to_string(spec.boot_levels) + ": too many");
  const u32 n = u32{1} << spec.log_n;

  std::string reasons;
  for (int t_max : {5, 8}) {
    for (const Cycle& cyc : find_cycles(s, t_max)) {
      const int len = static_cast<int>(cyc.seq.size());
      const int L = static_cast<int>(spec.levels);
      // Level-0 choice: phase, main count m0, free base primes f.
      struct Choice {
        int phase = 0, m0 = 0, t0 = 0, f = 0;
        double score = 1e300, free_bits = 0;
      } best;
      const double fmin = std::max(18.0, spec.log_n + 3.0);
      for (int ph = 0; ph < len; ++ph) {
        int pm = 0, pt = 0, min_m = 0, min_t = 0;
        for (int k = 0; k < len; ++k) {
          pm += cyc.seq[(ph + k) % len].dm;
          pt += cyc.seq[(ph + k) % len].dt;
          min_m = std::min(min_m, pm);
          min_t = std::min(min_t, pt);
        }
        const int t0 = -min_t;
        for (int m0 = -min_m; m0 <= -min_m + 3; ++m0) {
          for (int f = 0; f <= 3; ++f) {
            // Every level needs a prime.
            bool ok = true;
            int m = m0, t = t0;
            for (int l = 0; l <= L && ok; ++l) {
              if (m + t + f == 0) ok = false;
              const Tr tr = cyc.seq[(ph + l) % len];
              m += tr.dm;
              t += tr.dt;
            }
            if (!ok) continue;
            const double nb = m0 * cyc.x + t0 * cyc.y;
            const double F = log_base - nb;
            if (f > 0 && (F / f < fmin || F / f > 30.9)) continue;
            const double total = f > 0 ? log_base : nb;
            if (total <= s + 0.5) continue;
            const double sc = std::abs(total - log_base) + 2.0 * f + 0.1 * (m0 + t0);
            if (sc < best.score) best = {ph, m0, t0, f, sc, f > 0 ? F / f : 0};
          }
        }
      }
      if (best.score >= 1e299) continue;

      Builder b;
      b.s = s;
      b.boot_scale = boot_scale;
      b.log_base = log_base;
      b.log_n = spec.log_n;
      b.free_count = best.f;
      // Non-bootstrapping levels.
      int m = best.m0, t = best.t0;
      for (int l = 0; l <= L; ++l) {
        b.lv.push_back({best.f + m, t});
        b.kind.push_back(l == 0 ? Kind::kBase : Kind::kScale);
        const Tr tr = cyc.seq[(best.phase + l) % len];
        m += tr.dm;
        t += tr.dt;
      }
      int max_m = 0, max_t = 0;
      for (const auto& st : b.lv) {
        max_m = std::max(max_m, st.m);
        max_t = std::max(max_t, st.t);
      }
      b.main_nom.assign(max_m, static_cast<ld>(cyc.x));
      for (int i = 0; i < best.f; ++i)
        b.main_nom[i] = static_cast<ld>(best.free_bits);
      b.term_nom.assign(max_t, static_cast<ld>(cyc.y));
      // Bootstrapping levels.
      if (spec.boot_levels) {
        const int B = static_cast<int>(spec.boot_levels);
        const int R = max_t - b.lv.back().t;
        const int P = (R + 1) / 2;
        if (B < P)
          fail("boot_levels = " + std::to_string(B) +
               " too few: the last non-bootstrapping level " + std::to_string(L) + " holds " +
               std::to_string(b.lv.back().t) + " of the " + std::to_string(max_t) +
               " terminal primes of the cycle " + cycle_str(cyc) + ", and " + std::to_string(P) +
               " bootstrapping levels are needed to bring the rest into the top level (use more "
               "boot_levels or another levels count)");
        State st = b.lv.back();
        for (int k = 0; k < B - P; ++k) {
          st.m += 2;
          b.lv.push_back(st);
          b.kind.push_back(Kind::kBootDR);
          while (static_cast<int>(b.main_nom.size()) < st.m)
            b.main_nom.push_back(static_cast<ld>(boot_scale) / 2);
        }
        int r = R;
        if (r % 2 == 1) {
          st.m += 1;
          st.t += 1;
          --r;
          b.lv.push_back(st);
          b.kind.push_back(Kind::kBootDR);
          while (static_cast<int>(b.main_nom.size()) < st.m)
            b.main_nom.push_back(
                std::clamp(static_cast<ld>(boot_scale) - static_cast<ld>(cyc.y), 26.0L, 30.9L));
        }
        for (; r > 0; r -= 2) {
          st.t += 2;
          b.lv.push_back(st);
          b.kind.push_back(Kind::kBootTerm);
        }
      }
      if (!b.run()) {
        reasons += "cycle " + cycle_str(cyc) + ": " + b.why + "; ";
        continue;
      }

      ParameterSet p;
      p.log_degree = spec.log_n;
      p.log_default_scale = spec.log_scale;
      p.boot = spec.boot_levels > 0;
      p.dense_hamming_weight = spec.dense_hamming_weight ? spec.dense_hamming_weight : n / 2;
      p.sparse_hamming_weight =
          spec.sparse_hamming_weight ? spec.sparse_hamming_weight : (p.boot ? 32u : 0u);
      if (p.boot) {
        const u32 B = spec.boot_levels;
        p.num_cts_levels =
            spec.num_cts_levels ? spec.num_cts_levels : std::min<u32>(4, (B + 1) / 2);
        p.num_stc_levels =
            spec.num_stc_levels ? spec.num_stc_levels : std::min<u32>(3, B - p.num_cts_levels);
      }
      for (u32 q : b.main_q)
        p.main_primes.push_back(q);
      for (u32 q : b.term_q)
        p.terminal_primes.push_back(q);
      for (const auto& st : b.lv)
        p.level_config.push_back({static_cast<u32>(st.m), static_cast<u32>(st.t)});
      p.default_encryption_level = static_cast<u32>(L);
      const u32 limbs = p.max_limbs();
      const u32 alpha = spec.alpha ? spec.alpha : std::max<u32>(1, (limbs + 3) / 4);
      std::vector<u32> used(b.main_q.begin(), b.main_q.end());
      used.insert(used.end(), b.term_q.begin(), b.term_q.end());
      const auto aux =
          ntt_primes_near(spec.log_n, u64{1} << 31, alpha, u64{1} << 30, u64{1} << 31, used);
      if (aux.size() < alpha) {
        reasons += "not enough auxiliary primes; ";
        continue;
      }
      for (u32 q : aux)
        p.auxiliary_primes.push_back(q);

      // Check the scales (non-bootstrapping levels).
      const auto sc = level_log2_scales(p);
      double worst = 0;
      for (int l = 0; l <= L; ++l)
        worst = std::max(worst, std::abs(sc[l] - s));
      if (worst > 0.1) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "cycle %s: scale off by %.3f bits; ", cycle_str(cyc).c_str(),
                      worst);
        reasons += buf;
        continue;
      }
      p.name = "gen_N" + std::to_string(spec.log_n) + "_s" + std::to_string(spec.log_scale) + "_L" +
               std::to_string(spec.levels) + (p.boot ? "_boot" : "");
      char buf[400];
      std::snprintf(
          buf, sizeof buf,
          "25-30 prime system (theo::generate_prime_system): N = 2^%u, scale 2^%u, cycle %s "
          "with %.2f-bit main and %.2f-bit terminal primes, levels 0..%u%s, max scale "
          "deviation %.4f bits",
          spec.log_n, spec.log_scale, cycle_str(cyc).c_str(), cyc.x, cyc.y, spec.levels,
          p.boot ? (" + " + std::to_string(spec.boot_levels) + " bootstrapping levels (2^" +
                    std::to_string(boot_scale) + ")")
                       .c_str()
                 : "",
          worst);
      p.comment = buf;
      validate(p);
      return p;
    }
  }
  fail("generate_prime_system: no prime system for log_n = " + std::to_string(spec.log_n) +
       ", log_scale = " + std::to_string(spec.log_scale) + ", levels = " +
       std::to_string(spec.levels) + ", boot_levels = " + std::to_string(spec.boot_levels) +
       (reasons.empty() ? "" : ": " + reasons));
}

}  // namespace theo
