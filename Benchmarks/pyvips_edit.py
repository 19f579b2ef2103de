"""pyvips peer for Benchmarks/edit.sh and apply.sh: the same operations as
`darkroom edit --filter noir --filter 'tone exposure=0.5 contrast=0.2' --filter 'crop aspect=4:5'`,
written directly in pyvips: autorot, noir (luminance matrix + S-curve table), tone (one table),
centred 4:5 crop, JPEG Q=92.
Usage: python3 pyvips_edit.py IN OUT   or   python3 pyvips_edit.py --pool N --threads T OUTDIR IN..."""
import math
import os
import sys

LUMA = (0.2126, 0.7152, 0.0722)


def noir_curve():
    out = []
    for level in range(256):
        x = level / 255
        s = 2 * x * x if x < 0.5 else 1 - 2 * (1 - x) * (1 - x)
        out.append(min(255, max(0, round((0.35 * x + 0.65 * s) * 255))))
    return out


def tone_table(exposure=0.5, contrast=0.2):
    def decode(v):
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    def encode(v):
        return v * 12.92 if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055

    out = []
    for level in range(256):
        x = encode(min(1, decode(level / 255) * 2 ** exposure))
        x = min(1, max(0, 0.5 + (x - 0.5) * (1 + contrast)))
        out.append(min(255, max(0, round(x * 255))))
    return out


def edit(pyvips, source, target):
    image = pyvips.Image.new_from_file(source).autorot()
    image = image.recomb([list(LUMA)] * 3).rint().cast("uchar")
    lut = pyvips.Image.new_from_list([noir_curve()]).cast("uchar")
    image = image.maplut(lut)
    image = image.maplut(pyvips.Image.new_from_list([tone_table()]).cast("uchar"))
    width = min(image.width, math.floor(image.height * 4 / 5))
    height = min(image.height, math.floor(width * 5 / 4))
    image = image.crop((image.width - width) // 2, (image.height - height) // 2, width, height)
    image.write_to_file(target, Q=92)


def main():
    if sys.argv[1] == "--pool":
        processes, threads, outdir, inputs = int(sys.argv[2]), sys.argv[4], sys.argv[5], sys.argv[6:]
        os.environ["VIPS_CONCURRENCY"] = threads
        import multiprocessing

        with multiprocessing.Pool(processes) as pool:
            pool.starmap(work, [(path, os.path.join(outdir, os.path.basename(path))) for path in inputs])
    else:
        import pyvips

        edit(pyvips, sys.argv[1], sys.argv[2])


def work(source, target):
    import pyvips

    edit(pyvips, source, target)


if __name__ == "__main__":
    main()
