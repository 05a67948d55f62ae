#ifndef WASMTIME_TYPES_H
#define WASMTIME_TYPES_H

#include <wasmtime/types/arrayref.h>
#include <wasmtime/types/exnref.h>
#include <wasmtime/types/structref.h>
#include <wasmtime/types/val.h>

#endif // WASMTIME_TYPES_H
