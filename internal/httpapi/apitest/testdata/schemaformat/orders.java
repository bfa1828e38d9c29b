
@TigrisCollection(value = "orders")
public class Order implements TigrisCollectionType {
    @TigrisPrimaryKey(order = 1)
    private long user_id;
    @TigrisPrimaryKey(order = 2)
    private int n;
    private double total;

    public long getUser_id() {
        return user_id;
    }

    public void setUser_id(long user_id) {
        this.user_id = user_id;
    }

    public int getN() {
        return n;
    }

    public void setN(int n) {
        this.n = n;
    }

    public double getTotal() {
        return total;
    }

    public void setTotal(double total) {
        this.total = total;
    }

    public Order() {
    }

    public Order(
        long user_id,
        int n,
        double total
    ) {
        this.user_id = user_id;
        this.n = n;
        this.total = total;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (o == null || getClass() != o.getClass()) {
            return false;
        }

        Order other = (Order) o;
        return
            this.user_id == other.user_id &&
            this.n == other.n &&
            this.total == other.total;
    }

    @Override
    public int hashCode() {
        return Objects.hash(
            user_id,
            n,
            total
        );
    }
}
