"""kerascpp's image decoding, resizing and image_dataset_from_directory against Pillow and Keras.

tests/tools/image_data.cpp drives decode_image, resize_image, index_image_directory and
image_dataset_from_directory. The peers: Pillow writes the JPEG and PNG files and decodes them
(its bundled libjpeg-turbo uses the accurate integer IDCT, kerascpp's "INTEGER_ACCURATE");
Keras 3 (numpy backend) lists folders with the index_directory that image_dataset_from_directory
calls, and resizes with keras.ops.image.resize and smart_resize.
"""

import json
import os
import subprocess

import numpy as np
import pytest
from PIL import Image

from kerascpp_binaries import find_binary

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
from keras.src.utils import dataset_utils, image_dataset_utils, image_utils  # noqa: E402


def tool(*args):
    result = subprocess.run([find_binary("image_data"), *map(str, args)], capture_output=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def decode(path, channels, dct, tmp_path):
    out = tmp_path / "decoded.u8"
    h, w, c = map(int, tool("decode", path, channels, dct, out).split())
    return np.frombuffer(out.read_bytes(), dtype=np.uint8).reshape(h, w, c)


def smooth_image(h, w, channels, seed):
    """Gradients plus noise: enough detail for every DCT coefficient, not so much that JPEG is all noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)), ((x + y) * 3) % 256,
                     (x * y) % 256][:channels], axis=-1)
    noise = rng.integers(-20, 21, size=base.shape)
    return np.clip(base + noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("mode,subsampling,size", [("RGB", 0, (17, 23)), ("RGB", 2, (40, 33)), ("RGB", 1, (8, 8)),
                                                   ("L", 0, (31, 45))])
def test_jpeg_decodes_bit_equal_to_pillow_with_the_accurate_idct(tmp_path, mode, subsampling, size):
    h, w = size
    pixels = smooth_image(h, w, 3 if mode == "RGB" else 1, seed=h * w)
    path = tmp_path / "image.jpg"
    Image.fromarray(pixels if mode == "RGB" else pixels[..., 0], mode).save(path, quality=85, subsampling=subsampling)
    reference = np.asarray(Image.open(path))
    reference = reference if reference.ndim == 3 else reference[..., None]
    ours = decode(path, 0, "INTEGER_ACCURATE", tmp_path)
    assert ours.shape == reference.shape
    np.testing.assert_array_equal(ours, reference)
    # TensorFlow's default IDCT (INTEGER_FAST) is libjpeg's 8-bit approximation of the same transform:
    # a level or two off on noisy pixels. The bounds catch a wrong transform or colour conversion
    # (tens of levels off), not the approximation.
    fast = decode(path, 0, "default", tmp_path).astype(int)
    assert np.abs(fast - reference).mean() < 2.0
    assert np.abs(fast - reference).max() <= 16


def test_jpeg_to_grey_and_rgba(tmp_path):
    path = tmp_path / "image.jpg"
    Image.fromarray(smooth_image(20, 30, 3, seed=1), "RGB").save(path, quality=90)
    rgb = decode(path, 3, "INTEGER_ACCURATE", tmp_path)
    rgba = decode(path, 4, "INTEGER_ACCURATE", tmp_path)
    np.testing.assert_array_equal(rgba[..., :3], rgb)
    assert (rgba[..., 3] == 255).all()
    grey = decode(path, 1, "INTEGER_ACCURATE", tmp_path)
    # libjpeg's grey output is the decoded luma plane; Pillow's draft("L") asks libjpeg for the same.
    image = Image.open(path)
    image.draft("L", image.size)
    np.testing.assert_array_equal(grey[..., 0], np.asarray(image))


def test_cmyk_jpeg_converts_to_rgb_as_tensorflow_does(tmp_path):
    path = tmp_path / "cmyk.jpg"
    Image.fromarray(smooth_image(12, 10, 4, seed=3), "CMYK").save(path, quality=95)
    cmyk = np.asarray(Image.open(path)).astype(np.int64)  # Pillow undoes Adobe's inversion
    # TensorFlow's conversion: each of R, G, B is (255 - C|M|Y) * (255 - K) / 255, truncated.
    expected = ((255 - cmyk[..., :3]) * (255 - cmyk[..., 3:]) // 255).astype(np.uint8)
    np.testing.assert_array_equal(decode(path, 3, "INTEGER_ACCURATE", tmp_path), expected)


PNG_MODES = ["L", "LA", "RGB", "RGBA", "P", "P+tRNS", "I;16", "1"]


def png_file(tmp_path, mode):
    rng = np.random.default_rng(len(mode))
    path = tmp_path / f"image_{mode.replace(';', '').replace('+', '_')}.png"
    if mode in ("L", "LA", "RGB", "RGBA"):
        Image.fromarray(rng.integers(0, 256, size=(13, 19, len(mode)), dtype=np.uint8).squeeze(-1)
                        if mode == "L" else rng.integers(0, 256, size=(13, 19, len(mode)), dtype=np.uint8), mode).save(path)
    elif mode.startswith("P"):
        image = Image.fromarray(rng.integers(0, 16, size=(13, 19), dtype=np.uint8), "P")
        image.putpalette(rng.integers(0, 256, size=48, dtype=np.uint8).tolist())
        if mode == "P+tRNS":
            image.info["transparency"] = bytes(rng.integers(0, 256, size=16, dtype=np.uint8).tolist())
            image.save(path, transparency=image.info["transparency"])
        else:
            image.save(path)
    elif mode == "I;16":
        Image.fromarray(rng.integers(0, 65536, size=(13, 19), dtype=np.uint16)).save(path)
    else:
        Image.fromarray(rng.integers(0, 2, size=(13, 19), dtype=np.uint8) * 255).convert("1").save(path)
    return path


def pillow_png(path, mode):
    image = Image.open(path)
    if mode == "P":
        return np.asarray(image.convert("RGB"))
    if mode == "P+tRNS":
        return np.asarray(image.convert("RGBA"))
    if mode == "I;16":
        return (np.asarray(image).astype(np.uint32) >> 8).astype(np.uint8)  # TensorFlow keeps the high byte
    if mode == "1":
        return np.asarray(image.convert("L"))
    return np.asarray(image)


@pytest.mark.parametrize("mode", PNG_MODES)
def test_png_decodes_bit_equal_to_pillow(tmp_path, mode):
    path = png_file(tmp_path, mode)
    reference = pillow_png(path, mode)
    reference = reference if reference.ndim == 3 else reference[..., None]
    np.testing.assert_array_equal(decode(path, 0, "default", tmp_path), reference)


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "P"])
def test_png_channel_conversions(tmp_path, mode):
    path = png_file(tmp_path, mode)
    image = Image.open(path)
    np.testing.assert_array_equal(decode(path, 3, "default", tmp_path), np.asarray(image.convert("RGB")))
    np.testing.assert_array_equal(decode(path, 4, "default", tmp_path), np.asarray(image.convert("RGBA")))
    if mode != "L":
        # libpng's RGB to grey (no gamma): ITU-R BT.709 weights in 15-bit fixed point, rounded.
        rgb = np.asarray(image.convert("RGB")).astype(np.int64)
        expected = (6968 * rgb[..., 0] + 23434 * rgb[..., 1] + 2366 * rgb[..., 2] + 16384) >> 15
        ours = decode(path, 1, "default", tmp_path)[..., 0].astype(np.int64)
        assert np.abs(ours - expected).max() <= 1


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
@pytest.mark.parametrize("shape,size", [((7, 9, 3), (16, 5)), ((20, 13, 1), (6, 6)), ((5, 5, 2), (5, 5)),
                                        ((31, 17, 4), (12, 40))])
def test_resize_matches_keras(tmp_path, interpolation, shape, size):
    image = np.random.default_rng(sum(shape)).uniform(-2, 255, size=shape).astype(np.float32)
    (tmp_path / "in.f32").write_bytes(image.tobytes())
    tool("resize", tmp_path / "in.f32", *shape, *size, interpolation, tmp_path / "out.f32")
    ours = np.fromfile(tmp_path / "out.f32", dtype=np.float32).reshape(*size, shape[2])
    expected = keras.ops.convert_to_numpy(
        keras.ops.image.resize(image, size, interpolation=interpolation, antialias=False))
    # kerascpp samples at (o + 0.5) * (in / out) - 0.5 in float32, as TensorFlow's kernel (which
    # image_dataset_from_directory runs); Keras' numpy backend at (o + 0.5) / (out / in) - 0.5 with
    # renormalised weight matrices. The float32 roundings differ by up to ~1e-5 of the values.
    np.testing.assert_allclose(ours, expected, rtol=2e-5, atol=1e-4)


def make_tree(root, files):
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        seed = sum(map(ord, rel))
        if rel.lower().endswith((".png", ".jpg", ".jpeg")):
            h, w = 6 + seed % 7, 5 + seed % 11
            pixels = np.random.default_rng(seed).integers(0, 256, size=(h, w, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(path, format="PNG" if rel.lower().endswith(".png") else "JPEG")
        else:
            path.write_text("not an image")


TREE = ["cats/b.png", "cats/a.PNG", "cats/sub/z.jpg", "cats/sub dir/y.png", "cats/notes.txt", "dogs/10.jpeg",
        "dogs/9.jpg", "dogs/.hidden/h.png", "dog s/x.png", ".secret/s.png", "birds/inner/deeper/d.png",
        "top_level.png"]


@pytest.mark.parametrize("shuffle,seed", [(False, 0), (True, 1337), (True, 7)])
@pytest.mark.parametrize("labels", ["inferred", "none"])
def test_directory_order_labels_and_shuffle_equal_keras(tmp_path, shuffle, seed, labels):
    root = tmp_path / "images"
    make_tree(root, TREE)
    os.symlink(root / "cats", root / "dogs" / "link_to_cats")
    for follow_links in (False, True):
        ours = json.loads(tool("index", root, labels, int(shuffle), seed, int(follow_links)))
        paths, keras_labels, class_names = dataset_utils.index_directory(
            str(root), "inferred" if labels == "inferred" else None, formats=image_dataset_utils.ALLOWLIST_FORMATS,
            shuffle=shuffle, seed=seed, follow_links=follow_links, verbose=False)
        assert ours["file_paths"] == list(paths)
        if labels == "inferred":
            assert ours["labels"] == [int(v) for v in keras_labels]
            assert ours["class_names"] == list(class_names)
        else:
            assert ours["labels"] == [] and ours["class_names"] == []


@pytest.mark.parametrize("color_mode,interpolation,crop", [("rgb", "bilinear", 0), ("grayscale", "nearest", 0),
                                                           ("rgba", "bilinear", 1), ("rgb", "nearest", 1)])
def test_dataset_images_equal_pillow_decode_and_keras_resize(tmp_path, color_mode, interpolation, crop):
    root = tmp_path / "images"
    files = ["a/one.png", "a/two.png", "b/three.png"]
    make_tree(root, files)
    size = (9, 4)
    tool("load", root, *size, color_mode, interpolation, crop, tmp_path / "all.f32")
    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}[color_mode]
    ours = np.fromfile(tmp_path / "all.f32", dtype=np.float32).reshape(len(files), *size, channels)
    for k, rel in enumerate(sorted(files)):
        image = np.asarray(Image.open(root / rel).convert({"rgb": "RGB", "rgba": "RGBA", "grayscale": "RGB"}[color_mode]))
        if color_mode == "grayscale":  # libpng's weights, as decode_png(channels=1) above
            rgb = image.astype(np.int64)
            image = ((6968 * rgb[..., 0] + 23434 * rgb[..., 1] + 2366 * rgb[..., 2] + 16384) >> 15)[..., None]
        image = image.astype(np.float32)
        if crop:
            expected = image_utils.smart_resize(image, size, interpolation=interpolation)
        else:
            expected = keras.ops.convert_to_numpy(
                keras.ops.image.resize(image, size, interpolation=interpolation, antialias=False))
        np.testing.assert_allclose(ours[k], expected, rtol=0, atol=1e-3 if color_mode != "grayscale" else 1.01)
