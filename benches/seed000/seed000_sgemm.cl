// Seed 000's five SGEMM kernels, as published (after cnugteren's tutorial), for the benchmark
// that reproduces its table (`python benches/seed000/seed000.py`). Not part of the package.
//
//   C = A * B, A is M x K, B is K x N, C is M x N, all row-major float, no offsets.
//   M, N, K must be multiples of TS (the kernels have no bounds checks, as in the original).
//
// Entries and their launch geometry (global; local):
//   seed_naive    (M, N; TS, TS)               version 1: one work-item per C element
//   seed_tiled    (M, N; TS, TS)               version 2: TS x TS tiles in local memory
//   seed_wpt      (M/WPT, N; TS/WPT, TS)       version 3: WPT rows of C per work-item
//   seed_vector   (M, N/WIDTH; TS, TS/WIDTH)   version 4 (WIDTH 4) and 4b (WIDTH 8)
//
// Parameters: TS tile size (32), WPT work per thread (8), WIDTH vector width (4 or 8).
// The only change from the published text: version 3 uses RTS without defining it; here
// RTS = TS/WPT, the row stride its launch geometry implies.
#ifndef TS
#define TS 32
#endif
#ifndef WPT
#define WPT 8
#endif
#ifndef WIDTH
#define WIDTH 4
#endif
#define RTS (TS / WPT)

__kernel void seed_naive(__global float *A, __global float *B, __global float *C,
                         int M, int N, int K) {
  int row = get_global_id(0);
  int col = get_global_id(1);
  float intermediate_val = 0.0f;
  for (int k = 0; k < K; k++) {
    intermediate_val += A[row * K + k] * B[k * N + col];
  }
  C[row * N + col] = intermediate_val;
}

__kernel void seed_tiled(__global float *A, __global float *B, __global float *C,
                         int M, int N, int K) {
  const int row = get_local_id(0);
  const int col = get_local_id(1);
  const int global_row = TS * get_group_id(0) + row;
  const int global_col = TS * get_group_id(1) + col;
  __local float Asub[TS][TS];
  __local float Bsub[TS][TS];
  float intermediate_val = 0.0f;
  const int num_tiles = K / TS;
  for (int t = 0; t < num_tiles; t++) {
    const int t_row = TS * t + row;
    const int t_col = TS * t + col;
    Asub[row][col] = A[global_row * K + t_col];
    Bsub[row][col] = B[t_row * N + global_col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; k++) {
      intermediate_val += Asub[row][k] * Bsub[k][col];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[global_row * N + global_col] = intermediate_val;
}

__kernel void seed_wpt(__global float *A, __global float *B, __global float *C,
                       int M, int N, int K) {
  const int row = get_local_id(0);
  const int col = get_local_id(1);
  const int global_row = TS * get_group_id(0) + row;
  const int global_col = TS * get_group_id(1) + col;
  __local float Asub[TS][TS];
  __local float Bsub[TS][TS];
  float intermediate_val[WPT];
  for (int w = 0; w < WPT; w++) {
    intermediate_val[w] = 0.0f;
  }
  const int num_tiles = K / TS;
  for (int t = 0; t < num_tiles; t++) {
    for (int w = 0; w < WPT; w++) {
      const int t_row = TS * t + row;
      const int t_col = TS * t + col;
      Asub[row + w * RTS][col] = A[(global_row + w * RTS) * K + t_col];
      Bsub[row + w * RTS][col] = B[(t_row + w * RTS) * N + global_col];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; k++) {
      for (int w = 0; w < WPT; w++) {
        intermediate_val[w] += Asub[row + w * RTS][k] * Bsub[k][col];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int w = 0; w < WPT; w++) {
    C[(global_row + w * RTS) * N + global_col] = intermediate_val[w];
  }
}

#if WIDTH == 8
#define floatX float8
#else
#define floatX float4
#endif

__kernel void seed_vector(__global floatX *A, __global floatX *B, __global floatX *C,
                          int M, int N, int K) {
  const int row = get_local_id(0);
  const int col = get_local_id(1);
  const int global_row = TS * get_group_id(0) + row;
  const int global_col = (TS / WIDTH) * get_group_id(1) + col;
  __local floatX Asub[TS][TS / WIDTH];
  __local floatX Bsub[TS][TS / WIDTH];
  floatX intermediate_val = (floatX)(0.0f);
  const int num_tiles = K / TS;
  for (int t = 0; t < num_tiles; t++) {
    const int t_row = TS * t + row;
    const int t_col = (TS / WIDTH) * t + col;
    Asub[row][col] = A[global_row * (K / WIDTH) + t_col];
    Bsub[row][col] = B[t_row * (N / WIDTH) + global_col];
    barrier(CLK_LOCAL_MEM_FENCE);
    floatX vecA, vecB;
    float valA;
    for (int k = 0; k < TS / WIDTH; k++) {
      vecA = Asub[row][k];
      for (int w = 0; w < WIDTH; w++) {
        vecB = Bsub[WIDTH * k + w][col];
        switch (w) {
          case 0: valA = vecA.s0; break;
          case 1: valA = vecA.s1; break;
          case 2: valA = vecA.s2; break;
          case 3: valA = vecA.s3; break;
#if WIDTH == 8
          case 4: valA = vecA.s4; break;
          case 5: valA = vecA.s5; break;
          case 6: valA = vecA.s6; break;
          case 7: valA = vecA.s7; break;
#endif
        }
        intermediate_val += vecB * valA;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[global_row * (N / WIDTH) + global_col] = intermediate_val;
}
