/* The wrapped function, in an archive member that --wrap must still pull in through __real_. */
int compute(int x) { return x * 2; }
