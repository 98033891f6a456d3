// Ring-level benchmark cases: one Backend op each. Traffic models count each input word read
// once and each output word written once (4 bytes per word, tables excluded); see
// docs/benchmarks.md.

#include <memory>

#include "bench_case.h"

namespace theo::bench {

namespace {

double ln_words(const CaseEnv& env, double polys) {
  return polys * env.params.limbs * env.backend.n();
}

// Holds polys (and whatever else) alive for the duration of a case's timing.
template <typename T>
std::shared_ptr<T> keep(T value) {
  return std::make_shared<T>(std::move(value));
}

struct Polys {
  std::vector<RnsPoly> p;
};

Polys make_polys(CaseEnv& env, const Basis& basis, unsigned count) {
  Polys out;
  for (unsigned i = 0; i < count; ++i)
    out.p.push_back(env.random_poly(basis));
  return out;
}

PreparedCase ntt_case(CaseEnv& env, bool inverse) {
  auto st = keep(make_polys(env, env.main, 1));
  PreparedCase c;
  c.run = [&be = env.backend, st, inverse] {
    const PolyRef r[] = {st->p[0].ref()};
    if (inverse)
      be.intt(r);
    else
      be.ntt(r);
  };
  c.bytes_moved = word_bytes(ln_words(env, 2));
  c.keep_alive = st;
  return c;
}

const CaseRegistrar ntt_reg({"ntt", "2 L N 4", [](CaseEnv& env) { return ntt_case(env, false); }});
const CaseRegistrar intt_reg({"intt", "2 L N 4", [](CaseEnv& env) { return ntt_case(env, true); }});

// BConv src -> dst; the plan is built outside the timed region (tables are per Context).
PreparedCase bconv_case(CaseEnv& env, const Basis& src, const Basis& dst) {
  struct State {
    RnsPoly in, out;
    std::shared_ptr<const BConvPlan> plan;
  };
  auto st = std::make_shared<State>(
      State{env.random_poly(src), env.backend.make_poly(dst), env.backend.make_bconv(src, dst)});
  PreparedCase c;
  c.run = [&be = env.backend, st] { be.bconv(*st->plan, st->in.cref(), st->out.ref()); };
  c.bytes_moved = word_bytes(static_cast<double>(src.size + dst.size) * env.backend.n());
  c.extra = {{"src_limbs", src.size}, {"dst_limbs", dst.size}};
  c.keep_alive = st;
  return c;
}

// ModDown-like: the L limbs of a level onto the alpha auxiliary primes.
const CaseRegistrar bconv_reg({"bconv", "(L + alpha) N 4",
                               [](CaseEnv& env) { return bconv_case(env, env.main, env.aux); }});

// ModUp-like: one digit (L/dnum limbs) onto the other L - L/dnum level primes and the alpha
// auxiliary ones, i.e. the converted part of the L + alpha output.
const CaseRegistrar bconv_modup_reg({"bconv_modup", "(L + alpha) N 4", [](CaseEnv& env) {
                                       const u32 l = env.params.limbs;
                                       const u32 digit =
                                           (l + env.params.digits() - 1) / env.params.digits();
                                       const Basis src = env.main.slice(0, digit);
                                       const Basis dst =
                                           env.main.slice(digit, l - digit).concat(env.aux);
                                       PreparedCase c = bconv_case(env, src, dst);
                                       c.extra["dnum"] = env.params.digits();
                                       return c;
                                     }});

// Ops over the L limbs of `polys` polynomials (the inputs, then the outputs), each read or
// written once: op(backend, polys).
template <typename Op>
PreparedCase elementwise_case(CaseEnv& env, unsigned polys, Op op) {
  auto st = keep(make_polys(env, env.main, polys));
  PreparedCase c;
  c.run = [&be = env.backend, st, op] { op(be, st->p); };
  c.bytes_moved = word_bytes(ln_words(env, polys));
  c.keep_alive = st;
  return c;
}

const CaseRegistrar add_reg({"add", "3 L N 4", [](CaseEnv& env) {
                               return elementwise_case(env, 3, [](Backend& be, auto& p) {
                                 be.add(p[0].cref(), p[1].cref(), p[2].ref());
                               });
                             }});
const CaseRegistrar mul_reg({"mul", "3 L N 4", [](CaseEnv& env) {
                               return elementwise_case(env, 3, [](Backend& be, auto& p) {
                                 be.mul(p[0].cref(), p[1].cref(), p[2].ref());
                               });
                             }});
const CaseRegistrar mul_add_reg({"mul_add", "4 L N 4", [](CaseEnv& env) {
                                   return elementwise_case(env, 4, [](Backend& be, auto& p) {
                                     be.mul_add(p[0].cref(), p[1].cref(), p[2].cref(), p[3].ref());
                                   });
                                 }});

const CaseRegistrar mul_scalar_reg({"mul_scalar", "2 L N 4", [](CaseEnv& env) {
                                      std::vector<u32> s;
                                      for (u32 l = 0; l < env.main.size; ++l)
                                        s.push_back(env.backend.modulus(env.main[l]).q / 3);
                                      return elementwise_case(env, 2, [s](Backend& be, auto& p) {
                                        be.mul_scalar(p[0].cref(), s, p[1].ref());
                                      });
                                    }});

const CaseRegistrar tensor_reg({"tensor", "7 L N 4", [](CaseEnv& env) {
                                  return elementwise_case(env, 7, [](Backend& be, auto& p) {
                                    be.tensor(p[0].cref(), p[1].cref(), p[2].cref(), p[3].cref(),
                                              p[4].ref(), p[5].ref(), p[6].ref());
                                  });
                                }});

// KeyMult of HRot/HMult: dnum digits and 2 dnum key polys over the L + alpha basis, 2 outputs.
const CaseRegistrar key_mult_reg({"key_mult", "(3 dnum + 2) (L + alpha) N 4", [](CaseEnv& env) {
                                    const u32 dnum = env.params.digits();
                                    const Basis basis = env.main.concat(env.aux);
                                    auto st = keep(make_polys(env, basis, 3 * dnum + 2));
                                    PreparedCase c;
                                    c.run = [&be = env.backend, st, dnum] {
                                      std::vector<ConstPolyRef> d, kb, ka;
                                      for (u32 k = 0; k < dnum; ++k) {
                                        d.push_back(st->p[k].cref());
                                        kb.push_back(st->p[dnum + k].cref());
                                        ka.push_back(st->p[2 * dnum + k].cref());
                                      }
                                      be.key_mult(d, kb, ka, st->p[3 * dnum].ref(),
                                                  st->p[3 * dnum + 1].ref());
                                    };
                                    c.bytes_moved =
                                        word_bytes((3.0 * dnum + 2) * basis.size * env.backend.n());
                                    c.extra = {{"dnum", dnum}};
                                    c.keep_alive = st;
                                    return c;
                                  }});

const CaseRegistrar automorphism_reg({"automorphism", "2 L N 4", [](CaseEnv& env) {
                                        return elementwise_case(env, 2, [](Backend& be, auto& p) {
                                          const u32 k = 5;  // rotation by one slot
                                          be.automorphism(p[0].cref(), k, p[1].ref());
                                        });
                                      }});

// Par.4: sum of 8 automorphisms of 8 inputs (BSGS giant-step accumulation).
const CaseRegistrar automorphism_sum_reg({"automorphism_sum", "(K + 1) L N 4, K = 8",
                                          [](CaseEnv& env) {
                                            constexpr u32 kInputs = 8;
                                            auto st = keep(make_polys(env, env.main, kInputs + 1));
                                            std::vector<u32> ks;
                                            u32 g = 1;
                                            const u32 two_n = 2 * env.backend.n();
                                            for (u32 j = 0; j < kInputs; ++j) {
                                              g = static_cast<u32>((u64{g} * 5) % two_n);
                                              ks.push_back(g);
                                            }
                                            PreparedCase c;
                                            c.run = [&be = env.backend, st, ks] {
                                              std::vector<ConstPolyRef> ins;
                                              for (u32 j = 0; j < kInputs; ++j)
                                                ins.push_back(st->p[j].cref());
                                              be.automorphism_sum(ins, ks, st->p[kInputs].ref(),
                                                                  false);
                                            };
                                            c.bytes_moved = word_bytes(ln_words(env, kInputs + 1));
                                            c.extra = {{"inputs", kInputs}};
                                            c.keep_alive = st;
                                            return c;
                                          }});

const CaseRegistrar mul_monomial_reg({"mul_monomial", "2 L N 4", [](CaseEnv& env) {
                                        return elementwise_case(env, 2, [](Backend& be, auto& p) {
                                          be.mul_monomial(p[0].cref(), 3, p[1].ref());
                                        });
                                      }});

}  // namespace

}  // namespace theo::bench
