"""The code's format as a build fact: every C++ file under src/, tests/ and bench/ must be what
clang-format makes of it with the repository's .clang-format. Run by `meson test` (test
`format`); names each file that deviates (fix: clang-format -i FILE) and exits 1.

Usage: check_format.py SOURCE_ROOT CLANG_FORMAT"""
import os
import subprocess
import sys


def cpp_files(root):
    for top in ("src", "tests", "bench"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".cpp", ".hpp")):
                    yield os.path.join(dirpath, name)


def main():
    root, clang_format = sys.argv[1], sys.argv[2]
    bad = []
    for path in cpp_files(root):
        with open(path, "rb") as f:
            original = f.read()
        formatted = subprocess.run([clang_format, f"--assume-filename={path}", "--style=file"],
                                   input=original, stdout=subprocess.PIPE, check=True,
                                   cwd=root).stdout
        if formatted != original:
            bad.append(os.path.relpath(path, root))
    for path in bad:
        print(f"{path}: not formatted (clang-format -i {path})")
    print(f"format: {len(bad)} file(s) deviate" if bad else "format: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
