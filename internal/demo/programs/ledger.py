"""ledger: fred's guided demo (fred --demo pdb).

A bank balance must never go negative. It starts at 100 and takes 1,000
small deposits and withdrawals; one of them, late in the run, is a bug.
Which day broke the balance? fred-reverse-watch finds it.
"""
balance = 100
days = 0


def amount(day):
    a = day * 37 % 23 - 10  # between -10 and 12
    if day == 811:
        a = -5000  # the bug: a withdrawal nobody checked
    return a


def apply(day):
    global balance, days
    a = amount(day)
    balance += a
    days += 1


def main():
    for day in range(1, 1001):
        apply(day)
    print("balance after %d days: %d" % (days, balance))


main()
