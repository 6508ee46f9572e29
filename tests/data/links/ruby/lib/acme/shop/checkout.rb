module Acme
  module Shop
    class Checkout
      def pay(items)
        cart = Cart.new(PriceList.new)
        cart.total(items)
      end
    end
  end
end
