/* Compiled without -g: gdb stops here with no file or line. */
int nodebug_work(int x)
{
	volatile int y = x;
	return y * y;
}
