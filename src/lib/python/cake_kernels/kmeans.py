"""cake_kernels.kmeans — batched Euclidean k-means through libcake_kmeans.so.

    from cake_kernels import kmeans
    labels, centroids, n_iters = kmeans.fit(x, n_clusters=1000, max_iters=20, tol=1e-4)
    km = kmeans.KMeans(1000).fit(x); km.predict(x2)

fit() mirrors Flash-KMeans's batch_kmeans_Euclid(x, n_clusters, max_iters=100, tol=0.0,
init_centroids=None, verbose=False): x [B, N, D] (or [N, D]) bf16/f16 CUDA, D 64 or 128; it
returns (cluster_ids [B, N] int32, centroids [B, K, D], n_iters). Without init_centroids the
initial centroids are K random points of each batch (torch.randint, as batch_kmeans_Euclid),
or the K evenly spaced points when torch is absent. The loop stops when the largest centroid
shift is < tol (tol <= 0: run max_iters iterations, never waiting on the stream).
"""
import ctypes

from . import _native as nat

BF16, F16 = 0, 1
SORTED, ATOMIC = 0, 1
OP_FIT, OP_ASSIGN, OP_UPDATE = 0, 1, 2


def _update_code(update):
    if update in ("sorted", SORTED, None):
        return SORTED
    if update in ("atomic", ATOMIC):
        return ATOMIC
    raise nat.arg_error("kmeans", f"update {update!r}: use 'sorted' or 'atomic'")


def _points(x):
    """x as an Array with B, N, D (a 2-D x is one batch)."""
    X = nat.prepare("kmeans", x, "x")
    if X.dtype not in ("bf16", "f16"):
        raise nat.arg_error("kmeans", f"x must be bfloat16 or float16 (got {X.dtype})")
    if len(X.shape) == 2:
        return X, (1,) + tuple(X.shape), True
    if len(X.shape) != 3:
        raise nat.arg_error("kmeans", f"x must be [B, N, D] or [N, D] (got {list(X.shape)})")
    return X, tuple(X.shape), False


def _workspace(so, X, B, N, D, K, dt, op, upd, stream):
    n = so.cake_kmeans_workspace_size(B, N, D, K, dt, op, upd)
    if not n or not nat.is_torch(X.owner) or stream is not None:
        return None, None, 0
    ws = nat.empty(X, (n + 256,), "u8", "kmeans")
    p = ws.data_ptr()
    return ws, p + (-p) % 256, n


def _centroids_array(c, B, K, D, dtype, name):
    C = nat.prepare("kmeans", c, name)
    want = (B, K, D)
    if tuple(C.shape) not in (want, want[1:] if B == 1 else want):
        raise nat.arg_error("kmeans", f"{name} must be [{B}, {K}, {D}] (got {list(C.shape)})")
    if C.dtype != dtype:
        raise nat.arg_error("kmeans", f"{name} must have the points' dtype {dtype} (got {C.dtype})")
    return C


def fit(x, n_clusters, max_iters=100, tol=0.0, init_centroids=None, verbose=False, *, update="sorted", seed=None,
        stream=None, return_shift=False):
    """Lloyd's k-means: (labels [B, N] int32, centroids [B, K, D], n_iters) (and the last
    shift with return_shift). A 2-D x gives labels [N] and centroids [K, D]."""
    so = nat.lib("kmeans")
    X, (B, N, D), flat = _points(x)
    K = int(n_clusters)
    dt = BF16 if X.dtype == "bf16" else F16
    upd = _update_code(update)
    if int(max_iters) < 1:
        raise nat.arg_error("kmeans", f"max_iters is {max_iters}: run at least one iteration")
    rc = so.cake_kmeans_route(B, N, D, K, dt, upd, None, None, None, None)
    nat.check("kmeans", rc)   # a shape outside the domain, before anything is allocated
    st = nat.stream_of([X], stream)
    if init_centroids is not None:
        C0 = _centroids_array(init_centroids, B, K, D, X.dtype, "init_centroids")
        if not nat.is_torch(C0.owner):
            raise nat.arg_error("kmeans", "init_centroids must be a torch tensor (it is copied, never overwritten)")
        cent = C0.owner.reshape(B, K, D).clone()
    elif nat.is_torch(X.owner):
        torch = nat._torch()
        g = None
        if seed is not None:
            g = torch.Generator(device=X.owner.device)
            g.manual_seed(int(seed))
        xo = X.owner.reshape(B, N, D)
        idx = torch.randint(0, N, (B, K), device=xo.device, generator=g)
        cent = torch.gather(xo, 1, idx[..., None].expand(-1, -1, D)).contiguous()
    else:
        cent = nat.empty(X, (B, K, D), X.dtype, "kmeans")
        nat.check("kmeans", so.cake_kmeans_init_even(X.ptr, cent.data_ptr(), B, N, D, K, dt, st))
    labels = nat.empty(X, (B, N), "i32", "kmeans")
    ws, wp, wn = _workspace(so, X, B, N, D, K, dt, OP_FIT, upd, stream)
    iters, shift = ctypes.c_int(0), ctypes.c_double(0)
    rc = so.cake_kmeans_fit(X.ptr, cent.data_ptr(), labels.data_ptr(), B, N, D, K, dt, int(max_iters), float(tol), upd,
                            wp, wn, ctypes.byref(iters), ctypes.byref(shift) if (verbose or return_shift) else None, st)
    nat.check("kmeans", rc)
    if verbose:
        print(f"cake_kmeans: {iters.value} iterations, last centroid shift {shift.value:.6f}")
    if flat:
        labels, cent = labels[0], cent[0]
    out = (labels, cent, iters.value)
    return out + (shift.value,) if return_shift else out


def assign(x, centroids, *, out=None, stream=None):
    """The nearest centroid (squared L2, ties to the lower index) of every point: int32 [B, N]."""
    so = nat.lib("kmeans")
    X, (B, N, D), flat = _points(x)
    C = nat.prepare("kmeans", centroids, "centroids")
    K = C.shape[-2] if len(C.shape) >= 2 else 0
    C = _centroids_array(C.owner, B, K, D, X.dtype, "centroids")
    dt = BF16 if X.dtype == "bf16" else F16
    nat.check("kmeans", so.cake_kmeans_route(B, N, D, K, dt, SORTED, None, None, None, None))
    labels = out if out is not None else nat.empty(X, (B, N) if not flat else (N,), "i32", "kmeans")
    L = nat.prepare("kmeans", labels, "out")
    if L.dtype != "i32" or L.owner is not labels:
        raise nat.arg_error("kmeans", "out must be a dense int32 [B, N] tensor")
    ws, wp, wn = _workspace(so, X, B, N, D, K, dt, OP_ASSIGN, SORTED, stream)
    nat.check("kmeans", so.cake_kmeans_assign(X.ptr, C.ptr, L.ptr, B, N, D, K, dt, wp, wn,
                                              nat.stream_of([X, C, L], stream)))
    return labels


def update(x, labels, centroids, *, update="sorted", return_counts=False, stream=None):
    """New centroids: the mean of each cluster's points; an empty cluster keeps its centroid.
    Labels outside [0, K) count nowhere. With return_counts: (centroids, counts int32 [B, K])."""
    so = nat.lib("kmeans")
    X, (B, N, D), flat = _points(x)
    C = nat.prepare("kmeans", centroids, "centroids")
    K = C.shape[-2] if len(C.shape) >= 2 else 0
    C = _centroids_array(C.owner, B, K, D, X.dtype, "centroids")
    L = nat.prepare("kmeans", labels, "labels")
    if L.dtype != "i32" or tuple(L.shape) not in ((B, N), (N,) if B == 1 else (B, N)):
        raise nat.arg_error("kmeans", f"labels must be int32 [{B}, {N}] (got {L.dtype} {list(L.shape)})")
    dt = BF16 if X.dtype == "bf16" else F16
    upd = _update_code(update)
    nat.check("kmeans", so.cake_kmeans_route(B, N, D, K, dt, upd, None, None, None, None))
    new = nat.empty(X, tuple(C.shape), X.dtype, "kmeans")
    counts = nat.empty(X, (B, K), "i32", "kmeans") if return_counts else None
    ws, wp, wn = _workspace(so, X, B, N, D, K, dt, OP_UPDATE, upd, stream)
    nat.check("kmeans", so.cake_kmeans_update(X.ptr, L.ptr, C.ptr, new.data_ptr(),
                                              counts.data_ptr() if counts is not None else None, B, N, D, K, dt, upd,
                                              wp, wn, nat.stream_of([X, C, L], stream)))
    if return_counts:
        return new, counts[0] if flat else counts
    return new


def explain(B, N, D, K, dtype="bf16", update="sorted"):
    """Why a shape runs as it does: the domain, the padding and its cost, both guard axes."""
    so = nat.lib("kmeans")
    buf = ctypes.create_string_buffer(16384)
    so.cake_kmeans_explain(B, N, D, K, BF16 if dtype in ("bf16", "bfloat16", BF16) else F16, _update_code(update), buf,
                           len(buf))
    return buf.value.decode()


def route(B, N, D, K, dtype="bf16", update="sorted"):
    """(assign route, update route, padded N, padded K) of a shape (CakeShapeError outside)."""
    so = nat.lib("kmeans")
    a, u, n, k = ctypes.c_int(), ctypes.c_int(), ctypes.c_int64(), ctypes.c_int64()
    rc = so.cake_kmeans_route(B, N, D, K, BF16 if dtype in ("bf16", "bfloat16", BF16) else F16, _update_code(update),
                              ctypes.byref(a), ctypes.byref(u), ctypes.byref(n), ctypes.byref(k))
    nat.check("kmeans", rc)
    return (so.cake_kmeans_assign_route_name(a.value).decode(), so.cake_kmeans_update_route_name(u.value).decode(),
            n.value, k.value)


def version():
    return nat.lib("kmeans").cake_kmeans_version().decode()


class KMeans:
    """k-means as an estimator: KMeans(n_clusters).fit(x) sets labels_, cluster_centers_,
    n_iter_; predict(x) assigns new points to the fitted centroids."""

    def __init__(self, n_clusters, max_iters=100, tol=0.0, *, update="sorted", seed=None):
        self.n_clusters, self.max_iters, self.tol, self.update, self.seed = n_clusters, max_iters, tol, update, seed
        self.labels_ = self.cluster_centers_ = self.n_iter_ = None

    def fit(self, x, init_centroids=None):
        self.labels_, self.cluster_centers_, self.n_iter_ = fit(x, self.n_clusters, self.max_iters, self.tol,
                                                                init_centroids, update=self.update, seed=self.seed)
        return self

    def predict(self, x):
        if self.cluster_centers_ is None:
            raise nat.arg_error("kmeans", "KMeans.predict before fit")
        return assign(x, self.cluster_centers_)

    def fit_predict(self, x, init_centroids=None):
        return self.fit(x, init_centroids).labels_
