module Acme
  module Shop
    module Audits
      def audit(amount)
        amount
      end
    end
  end
end
