/* Exported under two versions by libv.map; everything else is local. */
int internal_helper(int x) { return x * 3; }
int api_one(int x) { return internal_helper(x) + 1; }
int api_two(int x) { return internal_helper(x) + 2; }
int api_data = 77;
