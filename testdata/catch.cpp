// catch: an order book takes 20,000 orders; order 15,001 has no quantity,
// and add() throws. The only breakpoint a person would set is in the catch
// block, hit once the book holds 15,000 orders.
#include <cstdio>
#include <map>
#include <stdexcept>

void add(std::map<int, int> &book, int id, int qty)
{
	if (qty <= 0)
		throw std::invalid_argument("order without a quantity");
	book[id] = qty;
}

int main()
{
	std::map<int, int> book;
	int rejected = 0;
	for (int i = 1; i <= 20000; i++) {
		try {
			add(book, i, i == 15001 ? 0 : i % 7 + 1);
		} catch (const std::invalid_argument &e) {
			rejected++; /* LINE:catch */
		}
	}
	printf("orders=%zu rejected=%d\n", book.size(), rejected);
	return 0;
}
