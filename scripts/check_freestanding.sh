#!/usr/bin/env bash
# Fails if a cross-built kernel or runtime library references the heap, exceptions, RTTI or iostreams.
set -euo pipefail
lib=$1
bad=$(arm-none-eabi-nm -u -C "$lib" | grep -E \
  'malloc|calloc|realloc|free$|operator new|operator delete|__cxa_throw|__cxa_allocate_exception|__gxx_personality|typeinfo|std::basic_ostream|std::cout|printf' || true)
if [ -n "$bad" ]; then
  echo "$lib is not freestanding; it references:"
  echo "$bad"
  exit 1
fi
