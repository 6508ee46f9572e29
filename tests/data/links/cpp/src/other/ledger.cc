namespace books {

class Ledger {
 public:
  long Plus(long a) { return a; }
};

}  // namespace books
