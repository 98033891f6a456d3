"""Parameters: presets, files, JSON, generated prime systems, security."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest

import theodosian as th

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_version_and_all() -> None:
    assert isinstance(th.__version__, str) and th.__version__.count(".") >= 1
    for name in th.__all__:
        assert hasattr(th, name), name


def test_presets_listed() -> None:
    names = th.presets()
    assert "bootparam_40" in names
    assert "test_n12" in names and "test_n13" in names


def test_preset_fields() -> None:
    p = th.Parameters.preset("bootparam_40")
    assert p.log_n == 16 and p.n == 1 << 16 and p.slots == 1 << 15
    assert p.log_default_scale == 40
    assert p.max_level == len(p.level_config) - 1
    assert p.alpha == len(p.auxiliary_primes)
    assert p.dnum >= 1 and p.word_bits == 32
    assert p.is_secure
    assert p.log2_q(0) < p.log2_q(p.max_level) < p.log2_pq
    p.validate()
    p.check_security()
    assert "bootparam_40" in repr(p)


def test_unknown_preset() -> None:
    with pytest.raises(th.ParameterError, match="unknown preset"):
        th.Parameters.preset("no_such_preset")
    with pytest.raises(ValueError):  # ParameterError is a ValueError
        th.Parameters.preset("no_such_preset")


def test_json_roundtrip_and_file(tmp_path: pathlib.Path) -> None:
    p = th.Parameters.preset("test_n13")
    q = th.Parameters.from_json(p.to_json(), "copy")
    assert q.main_primes == p.main_primes and q.level_config == p.level_config
    path = tmp_path / "set.json"
    p.save(path)
    r = th.Parameters.from_file(path)
    assert r.main_primes == p.main_primes and r.log_n == p.log_n
    assert th.Parameters.from_file(str(path)) == r
    assert copy.copy(p) == p and copy.deepcopy(p) == p


def test_from_file_anchor_preset() -> None:
    p = th.Parameters.from_file(REPO / "presets" / "bootparam_35.json")
    assert p.log_default_scale == 35


def test_bad_json_names_field() -> None:
    text = json.loads(th.Parameters.preset("test_n12").to_json())
    text["log_degree"] = "twelve"
    with pytest.raises(th.ParameterError, match="log_degree"):
        th.Parameters.from_json(json.dumps(text))
    with pytest.raises(th.ParameterError):
        th.Parameters.from_json("{ not json")


def test_generate() -> None:
    p = th.Parameters.generate(log_n=13, log_scale=40, levels=5)
    assert p.log_n == 13 and p.default_encryption_level == 5
    scales = p.level_log2_scales()
    assert len(scales) == 6 and all(abs(s - 40) < 0.5 for s in scales)
    with pytest.raises(th.ParameterError):
        th.Parameters.generate(log_n=13, log_scale=99)


def test_fields_editable() -> None:
    p = th.Parameters.preset("test_n12")
    p.default_encryption_level = 3
    assert p.default_encryption_level == 3
    p.main_primes = [4]
    with pytest.raises(th.ParameterError):
        p.validate()


def test_security_bound() -> None:
    assert th.max_log2_pq_128(16) > th.max_log2_pq_128(15) > 0
    assert th.max_log2_pq_128(12) == 0
    p = th.Parameters.preset("test_n12")
    assert not p.is_secure
    with pytest.raises(th.SecurityError, match="allow_insecure"):
        p.check_security()
    p.check_security(allow_insecure=True)
