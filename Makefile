# Cake — plain Makefile.
#   make            build bin/cake (optimised)
#   make test       build with ASan+UBSan and run every CPU-side test
#   make docs       regenerate docs/RULES.md from the rule registry
#   make fuzz       build the libFuzzer target (clang)
#   make bench      run CPU-side benchmarks
CC      ?= cc
CSTD     = -std=c11 -D_GNU_SOURCE
WARN     = -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS  ?= -O2 -g
LIBS     = -lsqlite3 -ljansson -lxxhash -ldl -lm -lpthread

SRC      := $(sort $(shell find src -name '*.c' ! -name main.c))
OBJ      := $(SRC:%.c=build/rel/%.o)
AOBJ     := $(SRC:%.c=build/asan/%.o)
SAN      = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
UNIT     := $(sort $(wildcard tests/unit/test_*.c))
UNITBIN  := $(UNIT:tests/unit/%.c=build/asan/tests/%)

all: bin/cake

# src/lib/embed.c copies these into the binary with .incbin (invisible to -MMD)
LIBASSETS := $(wildcard src/lib/rt/*.inc src/lib/rt/*.h src/lib/python/*.py src/lib/python/*.toml src/lib/python/cake_kernels/*.py)
build/rel/src/lib/embed.o build/asan/src/lib/embed.o: $(LIBASSETS)

bin/cake: build/rel/src/main.o build/rel/libcake.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

build/rel/libcake.a: $(OBJ)
	@rm -f $@
	ar rcs $@ $^

build/rel/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

build/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(SAN) -MMD -MP -c -o $@ $<

build/asan/libcake.a: $(AOBJ)
	@rm -f $@
	ar rcs $@ $^

build/asan/cake: build/asan/src/main.o build/asan/libcake.a
	$(CC) -g $(SAN) -o $@ $^ $(LIBS)

build/asan/tests/%: tests/unit/%.c build/asan/libcake.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(SAN) -Isrc -o $@ $< build/asan/libcake.a $(LIBS) -lcmocka

test: build/asan/cake $(UNITBIN)
	@CAKE=build/asan/cake sh tests/run_all.sh $(UNITBIN)

docs: bin/cake
	bin/cake rules --format=markdown > docs/RULES.md

fuzz: build/fuzz/fuzz_check

build/fuzz/fuzz_check: tests/fuzz/fuzz_check.c $(SRC)
	@mkdir -p build/fuzz
	clang $(CSTD) -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -o $@ tests/fuzz/fuzz_check.c $(SRC) $(LIBS)

bench: bin/cake
	sh bench/check_speed.sh

clean:
	rm -rf build bin

.PHONY: all test docs fuzz bench clean
-include $(OBJ:.o=.d) $(AOBJ:.o=.d) build/rel/src/main.d build/asan/src/main.d
