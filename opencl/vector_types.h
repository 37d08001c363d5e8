// Vector types of width VW built from the scalar T and ACC (included after they are defined):
// VT / VACC (e.g. float8), VLOAD / VSTORE (vload8 / vstore8) and their conversions.
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VT CAT(T, VW)
#define VACC CAT(ACC, VW)
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)
#define TO_VACC CAT(convert_, VACC)
#define TO_VT CAT(convert_, VT)
