"""Python binding of libwzplan (codec/wzplan.h): the cache-format registry,
wz profiles and encode/decode of cache windows, with numpy arrays in and
out.  It is a ctypes layer over the C library -- no codec logic lives here.

The library is found through $WZPLAN_LIB (a path to libwzplan.so), else
next to this file in the build tree (../.libs/libwzplan.so), else by the
system's loader (an installed libwzplan.so.0).
"""
import ctypes
import os

import numpy as np

__all__ = ["WzError", "formats", "canonical", "record_bytes", "Profile", "Codec", "version"]


class _Diag(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 1024)]


class _Window(ctypes.Structure):
    _fields_ = [("L", ctypes.c_int), ("T", ctypes.c_int), ("R", ctypes.c_int), ("P", ctypes.c_int),
                ("Q", ctypes.c_int), ("H", ctypes.c_int),
                ("latent", ctypes.c_void_p), ("rope", ctypes.c_void_p),
                ("q_latent", ctypes.c_void_p), ("q_rope", ctypes.c_void_p),
                ("q_index", ctypes.c_void_p), ("positions", ctypes.c_void_p),
                ("softmax_scale", ctypes.c_double),
                ("model", ctypes.c_char_p), ("split", ctypes.c_char_p), ("name", ctypes.c_char_p)]


class WzError(Exception):
    """A libwzplan error: .code is the wz_err value, str() the message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("WZPLAN_LIB"),
                  os.path.join(here, "..", ".libs", "libwzplan.so"),
                  "libwzplan.so.0"]
    last = None
    for c in candidates:
        if not c:
            continue
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            last = e
    raise OSError(f"libwzplan not found (set WZPLAN_LIB): {last}")


_lib = _load()
_P = ctypes.c_void_p
_lib.wz_version.restype = ctypes.c_char_p
_lib.wz_strerror.restype = ctypes.c_char_p
_lib.wz_strerror.argtypes = [ctypes.c_int]
_lib.wz_format_name.restype = ctypes.c_char_p
_lib.wz_format_description.restype = ctypes.c_char_p
_lib.wz_format_record_bytes.restype = ctypes.c_size_t
_lib.wz_format_record_bytes.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
_lib.wz_format_canonical.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, _P]
_lib.wz_profile_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(_P), _P]
_lib.wz_profile_prepare.argtypes = [_P, ctypes.c_int, ctypes.c_double, ctypes.POINTER(_P), _P]
_lib.wz_profile_prepare_rope.argtypes = [_P, ctypes.c_int, ctypes.c_double, _P, ctypes.c_int, _P,
                                        ctypes.POINTER(_P), _P]
_lib.wz_profile_save.argtypes = [_P, ctypes.c_char_p, _P]
_lib.wz_profile_free.argtypes = [_P]
_lib.wz_profile_shape.argtypes = [_P, _P, _P, _P]
_lib.wz_profile_model.restype = ctypes.c_char_p
_lib.wz_profile_model.argtypes = [_P]
_lib.wz_codec_new.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, _P,
                              ctypes.POINTER(_P), _P]
_lib.wz_codec_free.argtypes = [_P]
_lib.wz_codec_format.restype = ctypes.c_char_p
_lib.wz_codec_format.argtypes = [_P]
_lib.wz_codec_record_bytes.restype = ctypes.c_size_t
_lib.wz_codec_record_bytes.argtypes = [_P]
for _f in ("wz_encode_layer_at", "wz_roundtrip_layer_at"):
    getattr(_lib, _f).argtypes = [_P, ctypes.c_int, ctypes.c_int, _P, _P, _P, _P] + (
        [_P] if _f == "wz_encode_layer_at" else [_P, _P])
_lib.wz_decode_layer_at.argtypes = [_P, ctypes.c_int, ctypes.c_int, _P, _P, _P, _P, _P]
_lib.wz_window_bytes.argtypes = [_P, ctypes.POINTER(_Window), ctypes.POINTER(ctypes.c_uint64), _P]


_lib.wz_rope_freqs.argtypes = [ctypes.c_int, ctypes.c_double, _P, _P]


def rope_freqs(P, theta, yarn=None):
    """The inverse frequencies of RoPE on P values (P // 2 of them), plain or
    with YaRN (factor, original positions, beta_fast, beta_slow), as the
    library computes them for a profile that undoes RoPE."""
    out = np.zeros(P // 2, dtype=np.float64)
    y = None if yarn is None else np.ascontiguousarray(yarn, dtype=np.float64)
    if y is not None and y.shape != (4,):
        raise ValueError("yarn: factor, original positions, beta_fast, beta_slow")
    if not np.isfinite(float(theta)) or (y is not None and not np.isfinite(y).all()):
        raise ValueError("theta and yarn must be finite numbers")
    _lib.wz_rope_freqs(int(P), float(theta), _ptr(y), out.ctypes.data)
    return out


def _positions(positions, n):
    """n absolute positions as int64, or None (0..n-1)."""
    if positions is None:
        return None
    pos = np.ascontiguousarray(positions, dtype=np.int64)
    if pos.shape != (n,):
        raise ValueError(f"positions: shape {pos.shape}, expected ({n},)")
    return pos


def _ptr(a):
    return None if a is None else a.ctypes.data


def _check(code, diag):
    if code:
        msg = diag.msg.decode(errors="replace") or _lib.wz_strerror(code).decode()
        raise WzError(code, msg)


def version():
    return _lib.wz_version().decode()


def formats():
    """[(name, parametric, description)] for every registry entry."""
    return [(_lib.wz_format_name(i).decode(), bool(_lib.wz_format_parametric(i)),
             _lib.wz_format_description(i).decode()) for i in range(_lib.wz_format_count())]


def canonical(name):
    buf = ctypes.create_string_buffer(64)
    d = _Diag()
    _check(_lib.wz_format_canonical(name.encode(), buf, 64, ctypes.byref(d)), d)
    return buf.value.decode()


def record_bytes(name, R=512, P=64):
    return _lib.wz_format_record_bytes(name.encode(), R, P)


def _f32(a, shape, what):
    """a as contiguous float32 of the given shape; NaN and infinities are
    refused (no cache value is one, and the codec would carry them into
    every figure computed from the block)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if a.shape != shape:
        raise ValueError(f"{what}: shape {a.shape}, expected {shape}")
    if not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(f"{what}: {a[tuple(bad)]} at {tuple(int(i) for i in bad)} is not a finite number")
    return a


def _layer(layer, L):
    """A layer index as the C int it is passed as: a whole number in 0..L-1
    (ctypes would wrap 2**32 to 0)."""
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
        raise TypeError(f"layer: {layer!r} is not a whole number")
    if not 0 <= int(layer) < L:
        raise ValueError(f"layer: {layer} outside 0..{L - 1}")
    return int(layer)


class _WindowArgs:
    """Keeps the numpy arrays a _Window points at alive."""

    def __init__(self, latent, rope, q_latent=None, q_rope=None, q_index=None, positions=None,
                 softmax_scale=1.0, model=None, split=None, name=None):
        L, T, R = np.shape(latent)
        P = np.shape(rope)[2]
        self.latent = _f32(latent, (L, T, R), "latent")
        self.rope = _f32(rope, (L, T, P), "rope")
        w = _Window(L=L, T=T, R=R, P=P, latent=self.latent.ctypes.data, rope=self.rope.ctypes.data,
                    softmax_scale=float(softmax_scale))
        if q_latent is not None:
            Q, H = np.shape(q_latent)[1:3]
            self.q_latent = _f32(q_latent, (L, Q, H, R), "q_latent")
            self.q_rope = _f32(q_rope, (L, Q, H, P), "q_rope")
            self.q_index = np.ascontiguousarray(q_index, dtype=np.int64)
            if self.q_index.shape != (Q,):
                raise ValueError("q_index: one entry per query")
            w.Q, w.H = Q, H
            w.q_latent, w.q_rope, w.q_index = (self.q_latent.ctypes.data, self.q_rope.ctypes.data,
                                               self.q_index.ctypes.data)
        if positions is not None:
            self.positions = np.ascontiguousarray(positions, dtype=np.int64)
            if self.positions.shape != (T,):
                raise ValueError("positions: one entry per token")
            w.positions = self.positions.ctypes.data
        self.strings = [s.encode() if s is not None else None for s in (model, split, name)]
        w.model, w.split, w.name = self.strings
        self.window = w


class Profile:
    """A wz profile: Profile.load(path), or Profile.prepare(windows) where each
    window is a dict of arrays as in a cache-trace file (latent, rope and
    optionally q_latent, q_rope, q_index, positions, softmax_scale, model,
    split, name).  Windows whose split is "test" are refused."""

    def __init__(self, handle):
        self._h = handle

    @classmethod
    def load(cls, path):
        h, d = _P(), _Diag()
        _check(_lib.wz_profile_load(os.fsencode(path), ctypes.byref(h), ctypes.byref(d)), d)
        return cls(h)

    @classmethod
    def prepare(cls, windows, query_weight=-1.0, rope_freq=None, rope_layers=None):
        """A profile from calibration windows (dicts of Window's fields).
        rope_freq: the model's RoPE inverse frequencies, one per pair
        (2i, 2i+1) of the position part (a transformers model's
        rotary_emb.inv_freq): the position part is then coded after undoing
        RoPE (profile version 6), and encode/decode take positions.
        rope_layers: the layers that undo it (default every one;
        `wzplan codec prepare` leaves out layer 0, whose keys are a
        function of the token alone)."""
        args = [_WindowArgs(**w) for w in windows]
        arr = (_Window * len(args))(*[a.window for a in args])
        h, d = _P(), _Diag()
        freq = None if rope_freq is None else np.ascontiguousarray(rope_freq, dtype=np.float64)
        if freq is not None and freq.ndim != 1:
            raise ValueError("rope_freq: one frequency per pair")
        mask = None
        if rope_layers is not None:
            L = np.shape(windows[0]["latent"])[0]
            mask = np.zeros(L, dtype=np.uint8)
            for layer in rope_layers:
                if not 0 <= int(layer) < L:
                    raise ValueError(f"rope_layers: layer {layer} outside 0..{L - 1}")
                mask[int(layer)] = 1
        _check(_lib.wz_profile_prepare_rope(arr, len(args), float(query_weight), _ptr(freq),
                                            0 if freq is None else freq.shape[0], _ptr(mask),
                                            ctypes.byref(h), ctypes.byref(d)), d)
        return cls(h)

    def save(self, path):
        d = _Diag()
        _check(_lib.wz_profile_save(self._h, os.fsencode(path), ctypes.byref(d)), d)

    @property
    def shape(self):
        L, R, P = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        _lib.wz_profile_shape(self._h, ctypes.byref(L), ctypes.byref(R), ctypes.byref(P))
        return L.value, R.value, P.value

    @property
    def model(self):
        return _lib.wz_profile_model(self._h).decode()

    def close(self):
        if self._h:
            _lib.wz_profile_free(self._h)
            self._h = None

    __del__ = close


class Codec:
    """A codec for one format and cache shape L x (R + P); wz and wzx need a Profile."""

    def __init__(self, fmt, L, R, P, profile=None):
        self._profile = profile  # the C codec also holds it (either may be freed first)
        h, d = _P(), _Diag()
        _check(_lib.wz_codec_new(fmt.encode(), L, R, P, profile._h if profile else None,
                                 ctypes.byref(h), ctypes.byref(d)), d)
        self._h, self.L, self.R, self.P = h, L, R, P

    @property
    def format(self):
        return _lib.wz_codec_format(self._h).decode()

    @property
    def record_bytes(self):
        return _lib.wz_codec_record_bytes(self._h)

    def encode(self, layer, latent, rope, positions=None):
        """[n, R] and [n, P] float arrays -> uint8 records [n, record_bytes].
        positions: the tokens' absolute positions (default 0..n-1), which a
        profile that undoes RoPE (version 6) codes with."""
        n = np.shape(latent)[0]
        lat, rp = _f32(latent, (n, self.R), "latent"), _f32(rope, (n, self.P), "rope")
        pos = _positions(positions, n)
        out = np.empty((n, self.record_bytes), dtype=np.uint8)
        d = _Diag()
        _check(_lib.wz_encode_layer_at(self._h, _layer(layer, self.L), n, lat.ctypes.data, rp.ctypes.data,
                                       _ptr(pos), out.ctypes.data, ctypes.byref(d)), d)
        return out

    def decode(self, layer, records, positions=None):
        records = np.ascontiguousarray(records, dtype=np.uint8)
        n = records.shape[0]
        if records.shape != (n, self.record_bytes):
            raise ValueError(f"records: shape {records.shape}, expected ({n}, {self.record_bytes})")
        pos = _positions(positions, n)
        lat = np.empty((n, self.R), dtype=np.float32)
        rp = np.empty((n, self.P), dtype=np.float32)
        d = _Diag()
        _check(_lib.wz_decode_layer_at(self._h, _layer(layer, self.L), n, records.ctypes.data, _ptr(pos),
                                       lat.ctypes.data, rp.ctypes.data, ctypes.byref(d)), d)
        return lat, rp

    def roundtrip(self, layer, latent, rope, positions=None):
        """decode(encode(.)) of one layer's tokens at their positions
        (default 0..n-1): what attention reads."""
        n = np.shape(latent)[0]
        lat, rp = _f32(latent, (n, self.R), "latent"), _f32(rope, (n, self.P), "rope")
        pos = _positions(positions, n)
        lo = np.empty_like(lat)
        ro = np.empty_like(rp)
        d = _Diag()
        _check(_lib.wz_roundtrip_layer_at(self._h, _layer(layer, self.L), n, lat.ctypes.data, rp.ctypes.data,
                                          _ptr(pos), lo.ctypes.data, ro.ctypes.data,
                                          ctypes.byref(d)), d)
        return lo, ro

    def window_bytes(self, latent, rope):
        """Bytes a window [L, T, R] + [L, T, P] takes in this format (the
        written container for wzx)."""
        a = _WindowArgs(latent, rope)
        n, d = ctypes.c_uint64(), _Diag()
        _check(_lib.wz_window_bytes(self._h, ctypes.byref(a.window), ctypes.byref(n), ctypes.byref(d)), d)
        return n.value

    def close(self):
        if getattr(self, "_h", None):
            _lib.wz_codec_free(self._h)
            self._h = None

    __del__ = close
