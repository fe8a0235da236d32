"""_cake_build — the PEP 517 build backend of the cake_kernels package (written by `cake library`).

It needs only the standard library, so `pip install DIR` works without network access or
setuptools. The wheel holds the package as it is in DIR: cake_kernels/*.py and the
libcake_*.so libraries next to them; it is tagged for this platform (py3-none-<platform>)
because it carries native code, though no Python extension module.
"""
import base64
import hashlib
import os
import sysconfig
import zipfile

NAME = "cake_kernels"
DIST = "cake_kernels"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))


def _tag():
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"py3-none-{plat}"


def _files():
    root = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(root)):
        if name.endswith(".py") or name.endswith(".so"):
            yield os.path.join(root, name), f"{NAME}/{name}"


def _metadata():
    return (f"Metadata-Version: 2.1\nName: cake-kernels\nVersion: {VERSION}\n"
            "Summary: Cake's generated sm_90a kernels (GEMM, k-means) over ctypes\nRequires-Python: >=3.8\n")


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, f"{DIST}-{VERSION}.dist-info")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(_metadata())
    return os.path.basename(d)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = f"{DIST}-{VERSION}-{_tag()}.whl"
    info = f"{DIST}-{VERSION}.dist-info"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, arc in _files():
            with open(path, "rb") as f:
                data = f.read()
            zi = zipfile.ZipInfo(arc)
            zi.external_attr = (0o755 if arc.endswith(".so") else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            records.append(_record_line(arc, data))
        extra = {f"{info}/METADATA": _metadata(),
                 f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: _cake_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n",
                 f"{info}/top_level.txt": f"{NAME}\n"}
        for arc, text in extra.items():
            data = text.encode()
            z.writestr(arc, data)
            records.append(_record_line(arc, data))
        records.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    name = f"{DIST}-{VERSION}"
    out = os.path.join(sdist_directory, f"{name}.tar.gz")
    with tarfile.open(out, "w:gz") as t:
        for rel in ("pyproject.toml", "_cake_build.py"):
            t.add(os.path.join(HERE, rel), f"{name}/{rel}")
        for path, arc in _files():
            t.add(path, f"{name}/{arc}")
    return os.path.basename(out)
