/* One 64-row decode product C = X W^T (row-major, W [N x K]) through the system OpenBLAS, timed
 * five ways: one call on one thread; its two column halves one after the other; the two column
 * halves on two pthreads (one OpenBLAS thread each, as rlvr's matmul.rs splits it, though rlvr
 * uses rayon, not a pthread per call); the two row halves on two pthreads; one call with
 * OpenBLAS's own two threads. Prints GFLOP/s. The figures in BENCHMARKS.md (session 8):
 *
 *     gcc -O2 bench/probe_openblas_split.c -o /tmp/probe -lopenblas -lpthread
 *     for s in "512 1408" "1024 512" "2816 512" "512 512" "4096 512"; do /tmp/probe $s; done
 *
 * Arguments: N K (the product's output columns and inner dimension). */
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
extern void openblas_set_num_threads(int);
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
typedef struct {int m,n,k,lda,ldb,ldc; const float*a,*b; float*c;} job;
static void run(job*j){cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasTrans,j->m,j->n,j->k,1.f,j->a,j->lda,j->b,j->ldb,0.f,j->c,j->ldc);}
static void* th(void*p){run((job*)p);return 0;}
int main(int argc,char**argv){
  if(argc!=3){fprintf(stderr,"usage: %s N K\n",argv[0]);return 2;}
  int M=64,N=atoi(argv[1]),K=atoi(argv[2]); int reps=200;
  openblas_set_num_threads(1);
  float*X=malloc(4*M*K),*W=malloc(4*(size_t)N*K),*C=malloc(4*M*N);
  for(int i=0;i<M*K;i++)X[i]=rand()/(float)RAND_MAX;
  for(long i=0;i<(long)N*K;i++)W[i]=rand()/(float)RAND_MAX;
  double fl=2.0*M*N*K;
  job whole={M,N,K,K,K,N,X,W,C};
  for(int w=0;w<20;w++) run(&whole);
  double t=now(); for(int r=0;r<reps;r++) run(&whole); double t1=(now()-t)/reps;
  job h0={M,N/2,K,K,K,N,X,W,C}, h1={M,N-N/2,K,K,K,N,X,W+(size_t)(N/2)*K,C+N/2};
  t=now(); for(int r=0;r<reps;r++){ run(&h0); run(&h1);} double t2=(now()-t)/reps;
  t=now(); for(int r=0;r<reps;r++){ pthread_t p; pthread_create(&p,0,th,&h1); run(&h0); pthread_join(p,0);} double t3=(now()-t)/reps;
  job r0={M/2,N,K,K,K,N,X,W,C}, r1={M-M/2,N,K,K,K,N,X+(M/2)*K,W,C+(M/2)*N};
  t=now(); for(int r=0;r<reps;r++){ pthread_t p; pthread_create(&p,0,th,&r1); run(&r0); pthread_join(p,0);} double t4=(now()-t)/reps;
  openblas_set_num_threads(2);
  for(int w=0;w<20;w++) run(&whole);
  t=now(); for(int r=0;r<reps;r++) run(&whole); double t5=(now()-t)/reps;
  printf("64x%dx%d GFLOP/s: whole 1thr %.0f | 2 col halves seq %.0f | col halves 2 pthreads %.0f | row halves 2 pthreads %.0f | openblas 2 thr %.0f\n",N,K,fl/t1/1e9,fl/t2/1e9,fl/t3/1e9,fl/t4/1e9,fl/t5/1e9);
}
