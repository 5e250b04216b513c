/* Shared between the two objects of rivet_a and with rivet_b. */
struct rivet_op {
	const char *name;
	int (*fn)(int x, int y);
};
extern const struct rivet_op rivet_ops[];
extern const int rivet_nops;
int rivet_apply(const char *name, int x, int y);
