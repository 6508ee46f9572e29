module Acme
  module Money
    class Discount
      def initialize(cents)
        @cents = cents
      end

      def apply(amount)
        Money.new([0, amount.cents - @cents].max)
      end
    end
  end
end
