# parvis — plain GNU Make. One executable per version: bin/<version>.
#
#   make [all]        every version this machine can build (+ the tools)
#   make bin/seq      one version
#   make lib          the library of every version: lib/libparvis-<version>.a (docs/API.md)
#   make python       the Python module: parvis/, one extension module per version
#   make list         the versions this machine can build
#   make clean
#
# Overrides: CXX=clang++  STB_INCLUDE=dir  FFTW_INCLUDE=dir FFTW_LIBDIR=dir  NVCC=path
#            CUDA_ARCH="sm_90" or "native" or "sm_75 sm_86"  SANITIZE=1 (CPU versions,
#            ASan + UBSan)  NO_STB=1 NO_FFTW=1 NO_CUDA=1 NO_OPENMP=1 (pretend it is missing)
#
# How a version is put together (DESIGN.md): main + the image layer + the shared code of
# every operation (src/<op>/*.cpp that are not version files) + exactly one version file
# per operation, chosen by name:
#   seq -> src/<op>/seq.cpp      simd -> src/<op>/simd.cpp      omp -> src/<op>/omp.cpp
#   cuda-naive -> cuda/<op>/naive.cu   cuda-opt -> cuda/<op>/opt.cu   blur-vN -> cuda/<op>/vN.cu
# and src/<op>/none.cpp ("<op> is not implemented in <version>") where that file is absent
# (video's none.cpp is the host pipeline, which serves every version without a pipeline of its own).
# A version file's parts (<name>_*.<ext> beside it, e.g. cuda/match/opt_ntt.cu) go with it.
# src/<op>/cpu_*.cpp are linked into the CPU versions only; cuda/*.cu, cuda/upload/*.cu (the
# host-to-device copier and `./main bench upload`) and cuda/<op>/*.cu that are not version files
# into the CUDA versions only.

SHELL := /bin/bash
.DEFAULT_GOAL := all

CXX := $(if $(filter default,$(origin CXX)),g++,$(CXX))
OPT ?= -O3
CXXFLAGS ?=
CXXFLAGS += -std=c++17 $(OPT) -Wall -Wextra -Iinclude -Isrc -Ibmp -MMD -MP
LDFLAGS ?=
LDLIBS := -lm -lpthread

VERSIONS_CPU := seq simd omp
VERSIONS_CUDA := cuda-naive cuda-opt blur-v1 blur-v2 blur-v3 blur-v4 blur-v5
OPS := match color filter blur integral video

# ---------------------------------------------------------------------------- probes
HASH := \#
probe_cxx = $(shell printf '%s\n' $(1) | $(CXX) -x c++ - -o /dev/null $(2) >/dev/null 2>&1 && echo 1)

ifeq ($(NO_OPENMP),)
HAVE_OPENMP := $(call probe_cxx,'$(HASH)include <omp.h>' 'int main(){return omp_get_max_threads()>0?0:1;}',-fopenmp)
endif

STB_INCLUDE ?= /usr/include/stb
ifeq ($(NO_STB),)
HAVE_STB := $(shell test -f $(STB_INCLUDE)/stb_image.h && test -f $(STB_INCLUDE)/stb_image_write.h && echo 1)
endif

FFTW_LIBS := -lfftw3f_threads -lfftw3f -lfftw3_threads -lfftw3
ifeq ($(NO_FFTW),)
HAVE_FFTW := $(call probe_cxx,'$(HASH)include <fftw3.h>' 'int main(){fftwf_init_threads();fftw_init_threads();return 0;}',$(if $(FFTW_INCLUDE),-I$(FFTW_INCLUDE)) $(if $(FFTW_LIBDIR),-L$(FFTW_LIBDIR)) $(FFTW_LIBS) -lpthread)
endif

ifeq ($(NO_CUDA),)
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
HAVE_NVCC := $(if $(NVCC),1)
endif

# The Python module: pybind11 for the python3 that has it (Debian: pybind11-dev python3-pybind11).
PYTHON ?= $(firstword $(foreach p,python3 /usr/bin/python3,$(shell $(p) -c 'import pybind11' >/dev/null 2>&1 && echo $(p))))
ifeq ($(NO_PYTHON),)
ifneq ($(PYTHON),)
PY_INCLUDES := $(shell $(PYTHON) -m pybind11 --includes 2>/dev/null)
PY_EXT := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
HAVE_PYBIND11 := $(call probe_cxx,'$(HASH)include <pybind11/pybind11.h>' 'int main(){return 0;}',$(PY_INCLUDES) -std=c++17 -fsyntax-only)
endif
endif

HAVE_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -q GPU && echo 1)
CUDA_ARCH ?= $(if $(HAVE_GPU),native,sm_75 sm_80 sm_86 sm_89 sm_90)
ifeq ($(strip $(CUDA_ARCH)),native)
CUDA_GENCODE := -arch=native
else
# Real code for every listed arch, plus PTX of the newest for cards after it.
CUDA_GENCODE := $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a:sm_%=%),code=$(a)) \
                -gencode arch=compute_$(lastword $(CUDA_ARCH:sm_%=%)),code=compute_$(lastword $(CUDA_ARCH:sm_%=%))
endif
NVCCFLAGS ?=
# -fPIC: the executables and the Python module share nvcc's objects.
NVCCFLAGS += -std=c++17 -O3 $(CUDA_GENCODE) -Iinclude -Isrc -Ibmp -Icuda -MMD -MP -Xcompiler -Wall,-fPIC
CUDA_LIBS := -lcufft

ifneq ($(SANITIZE),)
CXXFLAGS += -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

ifeq ($(MAKELEVEL),0)
ifeq ($(filter clean list,$(MAKECMDGOALS)),)
$(info parvis build ($(CXX)$(if $(SANITIZE), with ASan+UBSan)):)
$(info $(if $(HAVE_OPENMP),  ✓ OpenMP,  ✗ OpenMP: not found, $(BIN)/omp is left out))
$(info $(if $(HAVE_STB),  ✓ stb ($(STB_INCLUDE)): PNG/JPEG/TGA read and PNG/JPEG write,  ✗ stb: not found under $(STB_INCLUDE), images are BMP/PGM/PPM only (apt-get install libstb-dev, or STB_INCLUDE=dir)))
$(info $(if $(HAVE_FFTW),  ✓ FFTW: --method fft on the CPU,  ✗ FFTW: not found, the CPU FFT method is left out (apt-get install libfftw3-dev)))
$(info $(if $(HAVE_PYBIND11),  ✓ pybind11 ($(PYTHON)): make python,  ✗ pybind11: not found, make python is left out (apt-get install pybind11-dev python3-pybind11 python3-numpy)))
$(info $(if $(HAVE_NVCC),  ✓ nvcc ($(NVCC)): CUDA versions for $(CUDA_ARCH),  ✗ nvcc: not found, CUDA versions are left out))
endif
endif

# ---------------------------------------------------------------------------- what builds
VERSIONS := seq simd $(if $(HAVE_OPENMP),omp) $(if $(HAVE_NVCC),$(VERSIONS_CUDA))
ifneq ($(SANITIZE),)
VERSIONS := $(filter $(VERSIONS_CPU),$(VERSIONS))
endif

CONFIG := $(CXX)|$(CXXFLAGS)|$(SANITIZE)|stb$(HAVE_STB)|fftw$(HAVE_FFTW)|omp$(HAVE_OPENMP)|$(CUDA_GENCODE)
CONFIG_ID := $(shell printf '%s' '$(CONFIG)' | cksum | cut -d' ' -f1)
# BUILD and BIN may be moved (e.g. BUILD=/tmp/b BIN=/tmp/bin) to keep parallel builds apart.
BUILD ?= build
BIN ?= bin
B := $(BUILD)/$(CONFIG_ID)

DEFS := $(if $(HAVE_STB),-DPARVIS_HAVE_STB=1 -I$(STB_INCLUDE)) \
        $(if $(HAVE_FFTW),-DPARVIS_HAVE_FFTW=1 $(if $(FFTW_INCLUDE),-I$(FFTW_INCLUDE)))
FFTW_LINK := $(if $(HAVE_FFTW),$(if $(FFTW_LIBDIR),-L$(FFTW_LIBDIR)) $(FFTW_LIBS))

# Version files and the shared code of each operation.
VERSION_FILE_NAMES := seq.cpp simd.cpp omp.cpp none.cpp naive.cu opt.cu v1.cu v2.cu v3.cu v4.cu v5.cu
vfile_seq = src/$(1)/seq.cpp
vfile_simd = src/$(1)/simd.cpp
vfile_omp = src/$(1)/omp.cpp
vfile_cuda-naive = cuda/$(1)/naive.cu
vfile_cuda-opt = cuda/$(1)/opt.cu
vfile_blur-v1 = cuda/$(1)/v1.cu
vfile_blur-v2 = cuda/$(1)/v2.cu
vfile_blur-v3 = cuda/$(1)/v3.cu
vfile_blur-v4 = cuda/$(1)/v4.cu
vfile_blur-v5 = cuda/$(1)/v5.cu
op_file = $(firstword $(wildcard $(call vfile_$(2),$(1))) src/$(1)/none.cpp)
# A version file may be split: its parts are the files beside it named after it, e.g.
# cuda/match/opt_fft.cu for cuda/match/opt.cu (one file per kernel family); they belong to
# that version only.
parts_of = $(wildcard $(basename $(1))_*$(suffix $(1)))
version_files = $(foreach op,$(OPS),$(call op_file,$(op),$(1)) $(call parts_of,$(call op_file,$(op),$(1))))
VERSION_PARTS := $(foreach d,$(addprefix src/,$(OPS)) $(addprefix cuda/,$(OPS)),\
                   $(foreach f,$(VERSION_FILE_NAMES),$(call parts_of,$(d)/$(f))))

not_version = $(filter-out $(addprefix %/,$(VERSION_FILE_NAMES)) $(VERSION_PARTS),$(1))
# The layers, bottom up: src/common (what every layer needs), bmp (images), the operations,
# src/cli (the parser, subcommands, selftest registry). src/cpu and cuda/*.cu: per kind of version.
CORE_SRC := $(filter-out src/common/version.cpp,$(wildcard src/common/*.cpp)) $(wildcard bmp/*.cpp)
CLI_SRC := $(wildcard src/cli/*.cpp)
CPU_ONLY_SRC := $(foreach op,$(OPS),$(wildcard src/$(op)/cpu_*.cpp)) $(wildcard src/cpu/*.cpp)
OP_SHARED_SRC := $(filter-out $(CPU_ONLY_SRC),$(call not_version,$(wildcard $(addsuffix /*.cpp,$(addprefix src/,$(OPS))))))
CUDA_ONLY_SRC := $(call not_version,$(wildcard cuda/*.cu cuda/upload/*.cu $(addsuffix /*.cu,$(addprefix cuda/,$(OPS)))))
API_SRC := $(wildcard src/api/*.cpp)
APP_SRC := src/main.cpp $(CLI_SRC) $(CORE_SRC) $(OP_SHARED_SRC) $(API_SRC)

obj = $(patsubst %,$(B)/%.o,$(1))
version_obj = $(B)/version/$(1).o
version_objs = $(call obj,$(APP_SRC) $(call version_files,$(1)) \
                 $(if $(filter $(VERSIONS_CUDA),$(1)),$(CUDA_ONLY_SRC),$(CPU_ONLY_SRC))) \
               $(call version_obj,$(1))

# ---------------------------------------------------------------------------- rules
.PHONY: all list clean tools fuzz experiments lib python examples FORCE
all: $(addprefix $(BIN)/,$(VERSIONS)) tools

list:
	@printf '%s\n' $(VERSIONS)

# Relink when the configuration changes (compiler, flags, optional libraries).
$(B)/config.stamp: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(CONFIG)' | cmp -s - $@ || printf '%s\n' '$(CONFIG)' > $@

# The C++ objects of the executables and `make lib` in $(B); the Python module's copies in
# $(B)/pic, position-independent (a shared object needs it; the executables run faster without).
define cxx_rules
$(1)/%.cpp.o: %.cpp
	@mkdir -p $$(@D)
	$$(CXX) $$(CXXFLAGS) $$(DEFS) $$(if $$(filter src/%/omp.cpp,$$<),-fopenmp) -c $$< -o $$@

$(1)/version/%.o: src/common/version.cpp
	@mkdir -p $$(@D)
	$$(CXX) $$(CXXFLAGS) -DPARVIS_VERSION_NAME='"$$*"' -c $$< -o $$@ -MF $$(@:.o=.d)
endef
$(eval $(call cxx_rules,$(B)))
$(eval $(call cxx_rules,$(B)/pic))
$(B)/pic/%: CXXFLAGS += -fPIC -fno-semantic-interposition

$(B)/%.cu.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

# stb 2.27 calls memcpy(NULL, p, 0) on legal PNGs and left-shifts negative ints in its JPEG
# writer: harmless, but UBSan stops on them. Only for the stb glue file.
ifneq ($(SANITIZE),)
$(B)/bmp/stb_io.cpp.o $(B)/pic/bmp/stb_io.cpp.o: CXXFLAGS += -fno-sanitize=nonnull-attribute,shift-base
endif

define cpu_version
$(BIN)/$(1): $(call version_objs,$(1)) $(B)/config.stamp
	@mkdir -p $(BIN)
	$(CXX) $(LDFLAGS) $(if $(filter omp,$(1)),-fopenmp) -o $$@ $$(filter %.o,$$^) $(FFTW_LINK) $(LDLIBS)
endef
define cuda_version
$(BIN)/$(1): $(call version_objs,$(1)) $(B)/config.stamp
	@mkdir -p $(BIN)
	$(NVCC) $(CUDA_GENCODE) -o $$@ $$(filter %.o,$$^) $(CUDA_LIBS) $(LDLIBS)
endef
$(foreach v,$(filter $(VERSIONS_CPU),$(VERSIONS)),$(eval $(call cpu_version,$(v))))
$(foreach v,$(filter $(VERSIONS_CUDA),$(VERSIONS)),$(eval $(call cuda_version,$(v))))

# A version this machine cannot build: say why, fail.
$(addprefix $(BIN)/,$(filter-out $(VERSIONS),$(VERSIONS_CPU) $(VERSIONS_CUDA))):
	@echo "parvis: cannot build $(@F) here: $(if $(filter $(VERSIONS_CUDA),$(@F)),$(if $(SANITIZE),CUDA versions are not built with SANITIZE=1,nvcc was not found (install the CUDA toolkit or set NVCC=)),OpenMP was not found)" >&2; exit 1

# ---------------------------------------------------------------------------- the library
# A version's library is its objects without the command line: main, src/cli, each operation's
# cli/bench/selftest, the batches of `./main match`, the video pipeline (its sources and
# conversion stay: the library's VideoReader).
LIB ?= $(patsubst %bin,%lib,$(BIN))
LIB_LEAVE_OUT := src/main.cpp $(CLI_SRC) src/match/batch.cpp \
  $(wildcard src/*/cli.cpp src/*/bench.cpp src/*/selftest.cpp src/*/seed_cli.cpp cuda/*/bench.cu \
             src/video/run.cpp src/video/pipeline.cpp src/video/sink.cpp src/video/none.cpp \
             src/video/reader.cpp cuda/video/*.cu)
lib_objs = $(filter-out $(call obj,$(LIB_LEAVE_OUT)),$(call version_objs,$(1)))
# LIB_VERSIONS: which versions `make lib` and `make python` make (default: every one built here).
LIB_VERSIONS ?= $(VERSIONS)
lib: $(addprefix $(LIB)/libparvis-,$(addsuffix .a,$(filter $(VERSIONS),$(LIB_VERSIONS))))
# The Python module's archive: the same objects, position-independent where they are C++ (nvcc's
# are always).
pic_objs = $(patsubst $(B)/%.cpp.o,$(B)/pic/%.cpp.o,$(patsubst $(B)/version/%,$(B)/pic/version/%,$(call lib_objs,$(1))))
define lib_rule
$(LIB)/libparvis-$(1).a: $(call lib_objs,$(1)) $(B)/config.stamp
$(B)/pic/libparvis-$(1).a: $(call pic_objs,$(1)) $(B)/config.stamp
$(LIB)/libparvis-$(1).a $(B)/pic/libparvis-$(1).a:
	@mkdir -p $$(@D)
	rm -f $$@ && ar rcs $$@ $$(filter %.o,$$^)
endef
$(foreach v,$(VERSIONS),$(eval $(call lib_rule,$(v))))
# What a program linked with a version's library needs besides it.
lib_link = $(if $(filter $(VERSIONS_CUDA),$(1)),$(CUDA_LIBS) -lcudart_static -ldl -lrt,$(FFTW_LINK) $(if $(filter omp,$(1)),-fopenmp)) $(LDLIBS)

# examples/: small programs on the library, built against lib/libparvis-seq.a (EXAMPLE_VERSION).
EXAMPLE_VERSION ?= seq
EXAMPLES := $(addprefix $(BIN)/example-,$(basename $(notdir $(wildcard examples/*.cpp))))
examples: $(EXAMPLES)
$(BIN)/example-%: examples/%.cpp $(LIB)/libparvis-$(EXAMPLE_VERSION).a
	@mkdir -p $(BIN)
	$(if $(filter $(VERSIONS_CUDA),$(EXAMPLE_VERSION)),$(NVCC) $(CUDA_GENCODE) -std=c++17 -Iinclude,$(CXX) $(LDFLAGS) -std=c++17 -O2 -Iinclude) \
	  $< -o $@ $(LIB)/libparvis-$(EXAMPLE_VERSION).a $(call lib_link,$(EXAMPLE_VERSION))

# ---------------------------------------------------------------------------- the Python module
# parvis/__init__.py picks a version's extension module, parvis/_<version> (dashes as _): the
# bindings (src/python/bindings.cpp, compiled once) linked with that version's library.
PY_DIR := parvis
py_mod = $(PY_DIR)/_$(subst -,_,$(1))$(PY_EXT)
PY_MODULES := $(foreach v,$(filter $(VERSIONS),$(LIB_VERSIONS)),$(call py_mod,$(v)))
ifneq ($(HAVE_PYBIND11),)
python: $(PY_MODULES)
else
python:
	@echo "parvis: make python needs pybind11 (apt-get install pybind11-dev python3-pybind11 python3-numpy)" >&2; exit 1
endif
$(B)/src/python/bindings.o: src/python/bindings.cpp include/parvis/parvis.hpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -fPIC -fvisibility=hidden -Wall -Wextra -Iinclude $(PY_INCLUDES) -c $< -o $@ -MMD -MP
$(B)/src/python/init_%.o: src/python/bindings.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -fPIC -fvisibility=hidden -Iinclude $(PY_INCLUDES) -DPARVIS_MODULE_INIT=_$* -c $< -o $@
define py_rule
$(call py_mod,$(1)): $(B)/src/python/bindings.o $(B)/src/python/init_$(subst -,_,$(1)).o $(B)/pic/libparvis-$(1).a
	$(if $(filter $(VERSIONS_CUDA),$(1)),$(NVCC) -shared $(CUDA_GENCODE),$(CXX) -shared $(LDFLAGS)) -o $$@ \
	  $(B)/src/python/init_$(subst -,_,$(1)).o $(B)/src/python/bindings.o $(B)/pic/libparvis-$(1).a $(call lib_link,$(1))
endef
$(foreach v,$(VERSIONS),$(eval $(call py_rule,$(v))))

# Tools: the sample-image generator and the test helpers (not versions).
TOOL_CORE := $(call obj,$(CORE_SRC) src/cli/cli.cpp) $(call version_obj,tools)
TOOL_SRC := images/gen.cpp tests/image_test.cpp tests/compare.cpp
TOOLS := $(addprefix $(BIN)/parvis-,$(patsubst gen,gen,$(subst image_test,imgtest,$(basename $(notdir $(wildcard $(TOOL_SRC)))))))
tools: $(TOOLS)
# The generator is images/gen.cpp (subcommands, main) and its parts images/gen_*.cpp, one per family.
$(BIN)/parvis-gen: $(call obj,images/gen.cpp $(call parts_of,images/gen.cpp)) $(TOOL_CORE) $(B)/config.stamp
	@mkdir -p $(BIN)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)
$(BIN)/parvis-imgtest: $(call obj,tests/image_test.cpp) $(TOOL_CORE) $(B)/config.stamp
	@mkdir -p $(BIN)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)
$(BIN)/parvis-compare: $(call obj,tests/compare.cpp) $(TOOL_CORE) $(B)/config.stamp
	@mkdir -p $(BIN)
	$(CXX) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

# libFuzzer harness for the image readers (clang only).
FUZZ_CXX ?= clang++
fuzz: $(BIN)/fuzz-image
$(BIN)/fuzz-image: tests/fuzz/fuzz_image.cpp $(CORE_SRC) src/common/version.cpp
	@mkdir -p $(BIN)
	$(FUZZ_CXX) -std=c++17 -O1 -g -Iinclude -Isrc -Ibmp $(DEFS) -DPARVIS_VERSION_NAME='"fuzz"' \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o $@ $^

# The experiments of bench/experiments/ (one question each, docs/decisions/): built on their own,
# into $(B)/experiments/, never into bin/ and never by `all`.
EXP := $(B)/experiments
EXP_CU := fft_strips fft_callbacks integral_transpose host_copy_rate first_copy pull_rate pull_reads launch_cost
experiments: $(EXP)/write_floor $(if $(HAVE_NVCC),$(addprefix $(EXP)/,$(EXP_CU)))
$(EXP)/write_floor: bench/experiments/write_floor.c
	@mkdir -p $(@D)
	$(CC) -O2 -mavx2 -pthread $< -o $@
$(EXP)/first_copy $(EXP)/pull_rate: EXP_EXTRA = cuda/upload/kernels.cu
$(EXP)/fft_strips $(EXP)/fft_callbacks: EXP_LIBS = -lcufft
$(EXP)/%: bench/experiments/%.cu
	@mkdir -p $(@D)
	$(NVCC) -O2 -std=c++17 $(CUDA_GENCODE) -Iinclude -Isrc -Icuda $< $(EXP_EXTRA) $(EXP_LIBS) -o $@

clean:
	rm -rf $(BUILD) $(BIN) $(LIB) $(PY_DIR)/_*.so

FORCE:

-include $(shell find $(B) -name '*.d' 2>/dev/null)
