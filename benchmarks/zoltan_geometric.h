/* Shared by the Zoltan drivers of the benchmarks (zoltan_rcb.c, zoltan_geom.c):
 * a Zoltan structure for a geometric method (RCB, HSFC) on the objects served
 * by the four callbacks, one global and one local id entry per object,
 * RETURN_LISTS=PARTS (the part of every local object) and the relative sizes
 * of the parts 0..p-1 (ids and widx: scratch arrays of p ints). */
#ifndef NUCE_BENCH_ZOLTAN_GEOMETRIC_H
#define NUCE_BENCH_ZOLTAN_GEOMETRIC_H
#include <mpi.h>
#include <zoltan.h>

typedef struct {
  ZOLTAN_NUM_OBJ_FN *num_obj;
  ZOLTAN_OBJ_LIST_FN *obj_list;
  ZOLTAN_NUM_GEOM_FN *num_geom;
  ZOLTAN_GEOM_MULTI_FN *geom_multi;
} GeomCallbacks;

static struct Zoltan_Struct *zoltan_geometric(const char *method, const char *weight_dim,
                                              GeomCallbacks cb, void *data, int p, int *ids,
                                              int *widx, float *sizes) {
  struct Zoltan_Struct *zz = Zoltan_Create(MPI_COMM_WORLD);
  Zoltan_Set_Param(zz, "DEBUG_LEVEL", "0");
  Zoltan_Set_Param(zz, "LB_METHOD", method);
  Zoltan_Set_Param(zz, "NUM_GID_ENTRIES", "1");
  Zoltan_Set_Param(zz, "NUM_LID_ENTRIES", "1");
  Zoltan_Set_Param(zz, "OBJ_WEIGHT_DIM", weight_dim);
  Zoltan_Set_Param(zz, "RETURN_LISTS", "PARTS");
  Zoltan_Set_Param(zz, "KEEP_CUTS", "0");
  Zoltan_Set_Num_Obj_Fn(zz, cb.num_obj, data);
  Zoltan_Set_Obj_List_Fn(zz, cb.obj_list, data);
  Zoltan_Set_Num_Geom_Fn(zz, cb.num_geom, data);
  Zoltan_Set_Geom_Multi_Fn(zz, cb.geom_multi, data);
  for (int k = 0; k < p; k++) ids[k] = k, widx[k] = 0;
  Zoltan_LB_Set_Part_Sizes(zz, 1, p, ids, widx, sizes);
  return zz;
}
#endif
