module Acme
  module Shop
    class BaseCart
      def total(items)
        raise NotImplementedError
      end

      def currency
        "EUR"
      end
    end
  end
end
